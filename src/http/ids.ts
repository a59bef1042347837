import { notFound } from "../errors/app-error.js";

/** Path ids: anything but a positive integer names no record, so it is a 404 (decisions §4). */
export function parseId(raw: string, what: string): number {
  if (!/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw notFound(what);
  return Number(raw);
}
