import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { type PageSecurity, sendHtmlPage } from "../../http/html-page.js";
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

const PAGE_SECURITY: PageSecurity = {
  frameAncestors: "'self'",
  allow: ["form-action 'none'"],
  // A receipt names a donor and an amount: never kept by a shared cache or indexed.
  cacheControl: "private, no-store",
  headers: { "x-robots-tag": "noindex" },
};

/**
 * Donation receipts and yearly statements behind the signed links stored in `receipt_url` and
 * `certification_url`: public printable pages, so every error here is an HTML page too.
 */
export function documentRoutes(app: FastifyInstance, context: GivingContext) {
  const tags = ["documents"];
  app.register(async (documents) => {
    documents.setErrorHandler((error, request, reply) => {
      const problem = toProblem(error, request);
      return sendHtmlPage(reply, problem.status, PAGE_SECURITY, (nonce) =>
        errorDocument(problem.status, problem.detail, nonce),
      );
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
        return sendHtmlPage(reply, 200, PAGE_SECURITY, (nonce) => receiptPage(receipt, nonce));
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
        return sendHtmlPage(reply, 200, PAGE_SECURITY, (nonce) => statementPage(statement, nonce));
      },
    );
  });
}
