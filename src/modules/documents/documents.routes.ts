import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply } from "fastify";
import { Type } from "typebox";
import { toProblem } from "../../http/problem.js";
import type { GivingContext } from "../giving/giving.context.js";
import { errorDocument, loadReceipt, receiptPage } from "./receipt.page.js";
import { loadStatement, parseStatementYear, statementPage } from "./statement.page.js";

const html = (description: string) => ({ description, content: { "text/html": { schema: Type.String() } } });
const DocumentParams = Type.Object({
  id: Type.String({ description: "The donation (receipt) or supporter (statement) id" }),
  signature: Type.String({ description: "The link's signature; only links the platform issued open" }),
});
const DocumentErrors = { 404: html("No such document, or the signature does not match") };

/** Sends a page built around a fresh nonce: its own inline style and script run, nothing else does. */
function sendDocument(reply: FastifyReply, status: number, render: (nonce: string) => string) {
  const nonce = randomBytes(16).toString("base64");
  return reply
    .code(status)
    .headers({
      "content-type": "text/html; charset=utf-8",
      // A receipt names a donor and an amount: never kept by a shared cache or indexed.
      "cache-control": "private, no-store",
      "x-robots-tag": "noindex",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "content-security-policy":
        `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; ` +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'self'",
    })
    .send(render(nonce));
}

/**
 * Donation receipts and yearly statements behind the signed links stored in `receipt_url` and
 * `certification_url`: public printable pages, so every error here is an HTML page too.
 */
export function documentRoutes(app: FastifyInstance, context: GivingContext) {
  const tags = ["documents"];
  app.register(async (documents) => {
    documents.setErrorHandler((error, request, reply) => {
      const problem = toProblem(error, request);
      return sendDocument(reply, problem.status, (nonce) => errorDocument(problem.status, problem.detail, nonce));
    });

    documents.get(
      "/documents/receipts/:id/:signature",
      {
        schema: {
          operationId: "retrieve_receipt",
          tags,
          summary: "A donation's printable receipt (the donation's receipt_url)",
          params: DocumentParams,
          response: { 200: html("The receipt, printable on A4"), ...DocumentErrors },
        },
      },
      async (request, reply) => {
        const { id, signature } = request.params as { id: string; signature: string };
        const receipt = await loadReceipt(context.db, context.links, id, signature);
        return sendDocument(reply, 200, (nonce) => receiptPage(receipt, nonce));
      },
    );

    documents.get(
      "/documents/statements/:id/:signature",
      {
        schema: {
          operationId: "retrieve_statement",
          tags,
          summary: "A supporter's yearly statement of donations (the supporter's certification_url)",
          params: DocumentParams,
          querystring: Type.Object({
            year: Type.Optional(
              Type.String({ description: "Calendar year (default: the latest year with donations)" }),
            ),
          }),
          response: {
            200: html("The statement, printable on A4"),
            400: html("The year is not a four-digit calendar year"),
            ...DocumentErrors,
          },
        },
      },
      async (request, reply) => {
        const { id, signature } = request.params as { id: string; signature: string };
        const year = parseStatementYear((request.query as { year?: string }).year);
        const statement = await loadStatement(context.db, context.links, id, signature, year);
        return sendDocument(reply, 200, (nonce) => statementPage(statement, nonce));
      },
    );
  });
}
