import { createHash, randomBytes } from "node:crypto";
import sharp, { type Metadata } from "sharp";
import type { Executor } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { findRendition, type ImageRow, insertImage, type RenditionRow } from "./images.repo.js";

/** What an organization may upload, by the Content-Type it declares; the bytes must say the same. */
export const IMAGE_TYPES = { "image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp" } as const;
export type ImageType = keyof typeof IMAGE_TYPES;
/** The largest upload accepted, in bytes. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Decoding stops past this many pixels: a small file that would unpack to gigabytes is refused. */
const MAX_INPUT_PIXELS = 40_000_000;

/** Each purpose's resized widths, smallest first, the format they are served in, and the smallest upload taken. */
export const PURPOSES = {
  // PNG keeps a logo's transparency, and PDFs (pdfkit) and every email client can show it.
  logo: { widths: [128, 256, 512], format: "png", minWidth: 64, minHeight: 32 },
  cover: { widths: [480, 960, 1600], format: "jpeg", minWidth: 480, minHeight: 240 },
} as const;
export type ImagePurpose = keyof typeof PURPOSES;

const CONTENT_TYPE = { png: "image/png", jpeg: "image/jpeg" } as const;

/** The first bytes of each accepted format: only these reach an image decoder. */
function formatOfBytes(bytes: Buffer): "png" | "jpeg" | "webp" | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") {
    return "webp";
  }
  return undefined;
}

export function isImageType(value: string): value is ImageType {
  return Object.hasOwn(IMAGE_TYPES, value);
}

/** The media type of a Content-Type header, lower case and without parameters. */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** An upload checked and resized, not stored yet: the work happens before any transaction opens. */
export interface PreparedImage {
  image: ImageRow & { id: string };
  renditions: RenditionRow[];
  format: "png" | "jpeg";
}

const refused = (message: string) => new AppError("invalid_image", message);

/**
 * Checks an upload (declared type, size, the bytes' own format, pixel size), then resizes it to the
 * purpose's widths (never enlarged), turned upright by its EXIF orientation and stripped of its
 * metadata (a phone photo's location stays on the phone). Refusals are 4xx; saveImage stores it.
 */
export async function prepareImage(
  organizationId: number,
  purpose: ImagePurpose,
  upload: { bytes: Buffer; contentType: string },
): Promise<PreparedImage> {
  const declared = mediaTypeOf(upload.contentType);
  if (!isImageType(declared)) {
    throw new AppError(
      "unsupported_media_type",
      `Upload a PNG, JPEG or WebP image, with its Content-Type (image/png, image/jpeg or image/webp); this request's is ${declared || "missing"}`,
    );
  }
  if (upload.bytes.length === 0) throw refused("The upload is empty: send the image's bytes as the request body");
  if (upload.bytes.length > MAX_IMAGE_BYTES) {
    throw new AppError("request_too_large", `An image may be at most ${MAX_IMAGE_BYTES / 1024 / 1024} MB`);
  }
  const spec = PURPOSES[purpose];
  // The bytes' own signature first: an SVG, TIFF or anything else never reaches libvips' other decoders.
  const signed = formatOfBytes(upload.bytes);
  if (signed !== IMAGE_TYPES[declared]) {
    throw refused(
      signed
        ? `The file is a ${signed.toUpperCase()} image, not ${declared}`
        : `This file cannot be read as an image (${declared} was declared)`,
    );
  }
  const source = () => sharp(upload.bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "error" });
  let meta: Metadata;
  try {
    meta = await source().metadata();
  } catch {
    throw refused(`This file cannot be read as an image (${declared} was declared)`);
  }
  if (meta.format !== IMAGE_TYPES[declared]) {
    throw refused(
      `The file is ${meta.format ? `a ${meta.format.toUpperCase()} image` : "not an image"}, not ${declared}`,
    );
  }
  // EXIF orientations 5 to 8 turn the picture a quarter: its upright width is its stored height.
  const quarter = (meta.orientation ?? 1) >= 5;
  const width = (quarter ? meta.height : meta.width) ?? 0;
  const height = (quarter ? meta.width : meta.height) ?? 0;
  if (width * height > MAX_INPUT_PIXELS) {
    throw refused(
      `The image is ${width}×${height} pixels; at most ${MAX_INPUT_PIXELS / 1_000_000} million pixels are accepted`,
    );
  }
  if (width < spec.minWidth || height < spec.minHeight) {
    throw refused(
      `The image is ${width}×${height} pixels; a ${purpose} must be at least ${spec.minWidth}×${spec.minHeight}`,
    );
  }
  const widths: number[] = spec.widths.filter((w) => w < width);
  if (widths.length < spec.widths.length) widths.push(width);
  const id = `img_${randomBytes(16).toString("base64url")}`;
  const renditions: RenditionRow[] = [];
  try {
    for (const w of widths) {
      const resized = source().rotate().resize({ width: w, withoutEnlargement: true });
      const { data, info } = await (spec.format === "png"
        ? resized.png({ compressionLevel: 9, adaptiveFiltering: true })
        : resized.flatten({ background: "#ffffff" }).jpeg({ quality: 82, mozjpeg: true })
      ).toBuffer({ resolveWithObject: true });
      renditions.push({
        organizationId,
        imageId: id,
        width: info.width,
        height: info.height,
        contentType: CONTENT_TYPE[spec.format],
        data,
      });
    }
  } catch {
    throw refused("This image is damaged: it could not be decoded to the end");
  }
  const image = {
    organizationId,
    id,
    purpose,
    sourceType: declared,
    sourceBytes: upload.bytes.length,
    width,
    height,
    sha256: createHash("sha256").update(upload.bytes).digest("hex"),
  };
  return { image, renditions, format: spec.format };
}

/** Stores a prepared image; it is never changed afterwards. */
export async function saveImage(tx: Executor, prepared: PreparedImage): Promise<void> {
  await insertImage(tx, prepared.image, prepared.renditions);
}

/** The absolute address of an image's largest width (what a logo_url names). */
export function largestImageUrl(prepared: PreparedImage, baseUrl: string): string {
  const largest = prepared.renditions.reduce((a, b) => (b.width > a.width ? b : a));
  return `${baseUrl.replace(/\/$/, "")}${imagePath(prepared.image.organizationId, prepared.image.id, largest.width, prepared.format)}`;
}

/** The public path of one width of an image (links.imageUrl makes it absolute). */
export function imagePath(organizationId: number, imageId: string, width: number, format: "png" | "jpeg"): string {
  return `/images/${organizationId}/${imageId}/${width}.${format === "jpeg" ? "jpg" : "png"}`;
}

/**
 * The image an address of ours names (`…/images/{org}/{id}/{width}.{ext}`), else undefined. Read by
 * its path, whatever the origin it was written with: a moved BASE_URL keeps finding its images.
 */
export function parseImageUrl(
  url: string,
): { organizationId: number; imageId: string; width: number; path: string } | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const match = /\/images\/(\d{1,18})\/(img_[A-Za-z0-9_-]{10,40})\/(\d{1,5})\.(png|jpg)$/.exec(path);
  if (!match) return undefined;
  return {
    organizationId: Number(match[1]),
    imageId: match[2] as string,
    width: Number(match[3]),
    path: match[0],
  };
}

/** One of the organization's own images, as a path on this server (pages load images from their own origin only). */
export function ownImagePath(url: string | null | undefined, organizationId: number): string | null {
  const named = url ? parseImageUrl(url) : undefined;
  return named && named.organizationId === organizationId ? named.path : null;
}

/** The bytes of one of our images, when a URL names one of the organization's (a receipt's logo in a PDF). */
export async function loadImageOfUrl(
  tx: Executor,
  organizationId: number,
  url: string | null,
): Promise<RenditionRow | undefined> {
  const named = url === null ? undefined : parseImageUrl(url);
  if (!named || named.organizationId !== organizationId) return undefined;
  return findRendition(tx, organizationId, named.imageId, named.width);
}
