import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receiver answers a request with; by default 200 "ok". */
export type Answer = (request: ReceivedWebhook, response: ServerResponse) => void;

/**
 * A real HTTP server that receives webhooks: it keeps every request and answers as the test says
 * (an answer, a redirect, silence); `down()` closes it, `up()` listens again on the same port.
 */
export async function startWebhookReceiver() {
  const received: ReceivedWebhook[] = [];
  let answer: Answer = (_request, response) => response.end("ok");
  let server: Server;
  const listen = (port: number) =>
    new Promise<Server>((resolve) => {
      const created = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
          const hook = {
            path: request.url ?? "",
            headers: request.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          };
          received.push(hook);
          answer(hook, response);
        });
      });
      created.keepAliveTimeout = 500;
      created.listen(port, "127.0.0.1", () => resolve(created));
    });
  server = await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    url: (path = "/hooks") => `http://127.0.0.1:${port}${path}`,
    answer(with_: Answer) {
      answer = with_;
    },
    async down() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
    async up() {
      server = await listen(port);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
