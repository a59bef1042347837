import type { FastifyInstance } from "fastify";
import { Type } from "typebox";
import { type PageSecurity, sendHtmlPage } from "../../http/html-page.js";
import { toProblem } from "../../http/problem.js";
import type { GivingContext } from "../giving/giving.context.js";
import { loadReceiptContent, receiptLogo } from "../receipts/receipt-access.js";
import { receiptHtml } from "../receipts/receipt-document.js";
import { receiptPdf } from "../receipts/receipt-pdf.js";
import { receiptCode } from "../receipts/receipts.service.js";
import { type DocumentAddress, errorDocument, loadReceipt, receiptPage } from "./receipt.page.js";
import { loadStatement, parseStatementYear, statementPage } from "./statement.page.js";

const html = (description: string) => ({ description, content: { "text/html": { schema: Type.String() } } });
const DocumentParams = Type.Object({
  id: Type.String({ description: "The donation (receipt) or supporter (statement) id" }),
  signature: Type.String({ description: "The link's signature; only links the platform issued open" }),
});
const OrganizationDocumentParams = Type.Object({
  organization: Type.String({ description: "The organization's id" }),
  ...DocumentParams.properties,
});
const DocumentErrors = { 404: html("No such document, or the signature does not match") };

const PAGE_SECURITY: PageSecurity = {
  frameAncestors: "'self'",
  // The issuer's logo, when it is one of its images served here.
  allow: ["form-action 'none'", "img-src 'self'"],
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

    // Links name their organization (one shard on a cluster); links issued before it was in the
    // path name the record alone and keep working.
    for (const path of ["/documents/receipts/:organization/:id/:signature", "/documents/receipts/:id/:signature"]) {
      const legacy = !path.includes(":organization");
      documents.get(
        path,
        {
          schema: {
            operationId: legacy ? "retrieve_receipt_legacy" : "retrieve_receipt",
            tags,
            summary: "A donation's printable receipt (the donation's receipt_url)",
            ...(legacy
              ? {
                  deprecated: true,
                  description: "Links issued before the organization was in the path; they keep working.",
                }
              : {}),
            params: legacy ? DocumentParams : OrganizationDocumentParams,
            response: { 200: html("The receipt, printable on A4"), ...DocumentErrors },
          },
        },
        async (request, reply) => {
          const receipt = await loadReceipt(context.db, context.links, request.params as DocumentAddress);
          return sendHtmlPage(reply, 200, PAGE_SECURITY, (nonce) => receiptPage(receipt, nonce));
        },
      );
    }

    const TaxReceiptQuery = Type.Object({
      lang: Type.Optional(
        Type.String({ maxLength: 35, description: "en or it: the receipt's words in that language" }),
      ),
    });
    documents.get(
      "/documents/tax-receipts/:organization/:id/:signature",
      {
        schema: {
          operationId: "retrieve_tax_receipt",
          tags,
          summary: "An issued receipt or yearly statement, printable (the receipt's url)",
          params: OrganizationDocumentParams,
          querystring: TaxReceiptQuery,
          response: { 200: html("The receipt, printable on A4, with a link to its PDF"), ...DocumentErrors },
        },
      },
      async (request, reply) => {
        const address = request.params as DocumentAddress;
        const { lang } = request.query as { lang?: string };
        const { content, logoUrl } = await loadReceiptContent(context.db, context.links, address, lang);
        const pdfUrl = `${request.url.split("?")[0]}/pdf${lang ? `?lang=${encodeURIComponent(lang)}` : ""}`;
        reply.header("content-language", content.locale);
        return sendHtmlPage(reply, 200, PAGE_SECURITY, (nonce) => receiptHtml(content, { nonce, pdfUrl, logoUrl }));
      },
    );
    documents.get(
      "/documents/tax-receipts/:organization/:id/:signature/pdf",
      {
        schema: {
          operationId: "retrieve_tax_receipt_pdf",
          tags,
          summary: "An issued receipt or yearly statement as a PDF (fonts embedded)",
          params: OrganizationDocumentParams,
          querystring: TaxReceiptQuery,
          response: {
            200: {
              description: "The PDF",
              content: { "application/pdf": { schema: Type.String({ format: "binary" }) } },
            },
            ...DocumentErrors,
          },
        },
      },
      async (request, reply) => {
        const { lang } = request.query as { lang?: string };
        const { row, content } = await loadReceiptContent(
          context.db,
          context.links,
          request.params as DocumentAddress,
          lang,
        );
        const pdf = await receiptPdf(content, await receiptLogo(context.db, row));
        return reply
          .headers({
            "content-type": "application/pdf",
            "content-disposition": `inline; filename="${row.kind === "statement" ? "statement" : "receipt"}-${receiptCode(row)}.pdf"`,
            "content-language": content.locale,
            "cache-control": "private, no-store",
            "x-robots-tag": "noindex",
            "x-content-type-options": "nosniff",
          })
          .send(pdf);
      },
    );

    for (const path of ["/documents/statements/:organization/:id/:signature", "/documents/statements/:id/:signature"]) {
      const legacy = !path.includes(":organization");
      documents.get(
        path,
        {
          schema: {
            operationId: legacy ? "retrieve_statement_legacy" : "retrieve_statement",
            tags,
            summary: "A supporter's yearly statement of donations (the supporter's certification_url)",
            ...(legacy
              ? {
                  deprecated: true,
                  description: "Links issued before the organization was in the path; they keep working.",
                }
              : {}),
            params: legacy ? DocumentParams : OrganizationDocumentParams,
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
          const year = parseStatementYear((request.query as { year?: string }).year);
          const statement = await loadStatement(context.db, context.links, request.params as DocumentAddress, year);
          return sendHtmlPage(reply, 200, PAGE_SECURITY, (nonce) => statementPage(statement, nonce));
        },
      );
    }
  });
}
