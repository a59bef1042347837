import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import PDFDocument from "pdfkit";
import type { ReceiptContent } from "./receipt-document.js";

/**
 * The receipt as a PDF (pdfkit), A4, with its fonts embedded: DejaVu Sans covers €, accented and
 * most Latin, Greek and Cyrillic letters, so a donor's name prints as they wrote it.
 */
const fontDirectory = path.join(
  path.dirname(createRequire(import.meta.url).resolve("dejavu-fonts-ttf/package.json")),
  "ttf",
);
const REGULAR = readFileSync(path.join(fontDirectory, "DejaVuSans.ttf"));
const BOLD = readFileSync(path.join(fontDirectory, "DejaVuSans-Bold.ttf"));

const INK = "#1f2933";
const MUTED = "#52606d";
const RULE = "#d9e2ec";
const VOID = "#b91c1c";

/** The PDF of a receipt; `logo` is the issuer's logo image (PNG or JPEG bytes), drawn at the top. */
export function receiptPdf(content: ReceiptContent, logo?: Buffer): Promise<Buffer> {
  const doc = new PDFDocument({
    size: "A4",
    margin: 56,
    info: { Title: `${content.title} ${content.number}`, Producer: "Donata", Creator: "Donata" },
    lang: content.locale,
    displayTitle: true,
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.registerFont("Regular", REGULAR);
  doc.registerFont("Bold", BOLD);
  const left = doc.page.margins.left;
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;

  if (content.void) {
    const top = doc.y;
    doc.font("Bold").fontSize(12).fillColor(VOID);
    const height = doc.heightOfString(content.void, { width: width - 20 }) + 16;
    doc.lineWidth(2).strokeColor(VOID).rect(left, top, width, height).stroke();
    doc.text(content.void, left + 10, top + 8, { width: width - 20 });
    doc.y = top + height + 14;
    // Across the page too, so a printed copy cannot be mistaken for a valid one.
    doc.save();
    doc.rotate(-30, { origin: [doc.page.width / 2, doc.page.height / 2] });
    doc.font("Bold").fontSize(96).fillColor(VOID).opacity(0.12);
    doc.text(content.void.split(/[:.]/)[0] ?? "VOID", 0, doc.page.height / 2 - 60, {
      width: doc.page.width,
      align: "center",
    });
    doc.restore();
    doc.opacity(1);
  }
  if (logo) {
    const top = doc.y;
    doc.image(logo, left, top, { fit: [160, 56] });
    doc.y = top + 56 + 16;
  }
  doc.x = left;
  doc.font("Bold").fontSize(20).fillColor(INK).text(content.title, { width });
  doc.moveDown(0.2);
  doc.font("Regular").fontSize(10).fillColor(MUTED).text(`${content.number} · ${content.issued}`, { width });
  if (content.replaces) doc.text(content.replaces, { width });
  doc.moveDown(1.2);

  const columnWidth = (width - 24) / 2;
  const top = doc.y;
  const party = (x: number, heading: string, lines: string[]) => {
    doc
      .font("Bold")
      .fontSize(8)
      .fillColor(MUTED)
      .text(heading.toUpperCase(), x, top, { width: columnWidth, characterSpacing: 0.5 });
    doc.moveDown(0.3);
    lines.forEach((line, index) => {
      doc
        .font(index === 0 ? "Bold" : "Regular")
        .fontSize(10)
        .fillColor(INK)
        .text(line, x, doc.y, { width: columnWidth });
    });
    return doc.y;
  };
  const leftEnd = party(left, content.issuer.heading, content.issuer.lines);
  const rightEnd = party(left + columnWidth + 24, content.donor.heading, content.donor.lines);
  doc.x = left;
  doc.y = Math.max(leftEnd, rightEnd) + 18;

  const row = (label: string, value: string, options: { bold?: boolean } = {}) => {
    const y = doc.y;
    doc
      .font("Regular")
      .fontSize(10)
      .fillColor(MUTED)
      .text(label, left, y, { width: width * 0.45 });
    const labelEnd = doc.y;
    doc
      .font(options.bold ? "Bold" : "Regular")
      .fontSize(10)
      .fillColor(INK)
      .text(value, left + width * 0.45, y, { width: width * 0.55, align: "right" });
    doc.y = Math.max(labelEnd, doc.y) + 5;
    doc
      .moveTo(left, doc.y - 2)
      .lineTo(left + width, doc.y - 2)
      .lineWidth(0.5)
      .strokeColor(RULE)
      .stroke();
    doc.y += 4;
  };
  for (const [label, value] of content.facts) row(label, value, { bold: true });
  if (content.lines) {
    doc.moveDown(0.8);
    doc
      .font("Bold")
      .fontSize(8)
      .fillColor(MUTED)
      .text(content.lines.heading.toUpperCase(), left, doc.y, { width, characterSpacing: 0.5 });
    doc.moveDown(0.4);
    for (const [date, method, amount] of content.lines.rows) row(method ? `${date} · ${method}` : date, amount);
    row(content.lines.total[0], content.lines.total[1], { bold: true });
  }
  doc.moveDown(1);
  for (const paragraph of content.legal) {
    doc.font("Regular").fontSize(9.5).fillColor(INK).text(paragraph, left, doc.y, { width, lineGap: 2 });
    doc.moveDown(0.6);
  }
  if (content.contact) doc.font("Regular").fontSize(9).fillColor(MUTED).text(content.contact, left, doc.y, { width });
  doc.end();
  return done;
}
