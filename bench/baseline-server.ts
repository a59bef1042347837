/**
 * The benchmark's baseline, forked by bench/run.ts: a bare Fastify server that answers
 * GET /baseline with a body held in memory, the same JSON object the product's default
 * checkout page returned. No route of the product, no database, no authentication, no
 * response schema: reply.send(object) makes Fastify serialize it with JSON.stringify on
 * every request. It is the ceiling of "Fastify sends this payload" on this machine.
 */
import Fastify from "fastify";

interface BodyMessage {
  type: "body";
  body: unknown;
}

function send(message: unknown) {
  if (!process.send) throw new Error("baseline-server.ts must be started by bench/run.ts (no IPC channel)");
  process.send(message);
}

async function serve(body: unknown) {
  const app = Fastify({ logger: false });
  app.get("/baseline", (_request, reply) => {
    reply.send(body);
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (!address || typeof address !== "object") throw new Error("baseline server has no address");
  send({ type: "ready", port: address.port });
  const stop = () => {
    app.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // The parent died or closed the channel: do not linger.
  process.on("disconnect", stop);
}

process.once("message", (message: BodyMessage) => {
  if (message?.type !== "body") {
    console.error("baseline-server: unexpected message", message);
    process.exit(1);
  }
  serve(message.body).catch((error) => {
    console.error("baseline-server:", error);
    process.exit(1);
  });
});
