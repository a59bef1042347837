import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

export type AfterResponse = (request: FastifyRequest, reply: FastifyReply, task: () => Promise<void>) => void;

/**
 * Runs work once a route's answer has been sent, so that what the work costs never shows in the
 * answer's timing (the donor sign-in form). A failure is logged; closing the app waits for the
 * work still running, so it never outlives the database it writes to.
 */
export function createAfterResponse(app: FastifyInstance): AfterResponse {
  const running = new Set<Promise<void>>();
  app.addHook("onClose", async () => {
    await Promise.allSettled([...running]);
  });
  return (request, reply, task) => {
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      const run: Promise<void> = Promise.resolve()
        .then(task)
        .catch((error: unknown) => request.log.error({ err: error }, "work after the response failed"))
        .finally(() => running.delete(run));
      running.add(run);
    };
    // "finish": the answer was handed to the network; "close": the client left before that.
    // Already answered or already gone (the client left while the handler awaited): at once.
    if (reply.raw.writableFinished || reply.raw.destroyed) return start();
    reply.raw.once("finish", start);
    reply.raw.once("close", start);
  };
}
