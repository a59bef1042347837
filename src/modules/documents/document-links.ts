import { createHmac, timingSafeEqual } from "node:crypto";
import type { Executor } from "../../db/client.js";
import { ensurePlatformKey } from "../../db/platform-keys.repo.js";

const KEY_NAME = "document_links";

export type DocumentKind = "receipt" | "statement" | "tax_receipt";

const PATHS: Record<DocumentKind, string> = {
  receipt: "receipts",
  statement: "statements",
  tax_receipt: "tax-receipts",
};

/**
 * Signed, unguessable links to the documents the platform generates: a donation's receipt and a
 * supporter's yearly statement. The signature covers the kind, the organization and the record,
 * so a link cannot be edited into another record's document.
 */
export class DocumentLinks {
  constructor(
    private readonly key: Buffer,
    readonly baseUrl: string,
  ) {}

  sign(kind: DocumentKind, organizationId: number, id: number): string {
    return createHmac("sha256", this.key).update(`${kind}:${organizationId}:${id}`).digest("base64url");
  }

  verify(kind: DocumentKind, organizationId: number, id: number, signature: string): boolean {
    const expected = Buffer.from(this.sign(kind, organizationId, id));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  url(kind: DocumentKind, organizationId: number, id: number): string {
    // The organization in the path: the page finds the record on its organization's shard.
    return `${this.baseUrl}/documents/${PATHS[kind]}/${organizationId}/${id}/${this.sign(kind, organizationId, id)}`;
  }

  receiptUrl(organizationId: number, donationId: number): string {
    return this.url("receipt", organizationId, donationId);
  }

  statementUrl(organizationId: number, supporterId: number): string {
    return this.url("statement", organizationId, supporterId);
  }

  /** An issued receipt or yearly statement (docs/receipts.md); its PDF is the same link with /pdf. */
  taxReceiptUrl(organizationId: number, receiptId: number): string {
    return this.url("tax_receipt", organizationId, receiptId);
  }
}

/** Loads the signing key, creating it on first start (every process of one database shares it). */
export async function loadDocumentLinks(db: Executor, baseUrl: string): Promise<DocumentLinks> {
  const key = await ensurePlatformKey(db, KEY_NAME);
  return new DocumentLinks(Buffer.from(key, "base64url"), baseUrl.replace(/\/+$/, ""));
}
