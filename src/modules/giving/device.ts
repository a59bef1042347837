export type Device = "desktop" | "mobile" | "tablet";

/** decisions.md §3: the donation's device, from the donor's User-Agent at checkout. */
export function deviceOf(userAgent: string | undefined): Device {
  const ua = userAgent ?? "";
  if (/iPad|Tablet|PlayBook|Silk|Kindle/i.test(ua) || (/Android/i.test(ua) && !/Mobile/i.test(ua))) return "tablet";
  if (/Mobi|iPhone|iPod|Android|Windows Phone|BlackBerry|Opera Mini/i.test(ua)) return "mobile";
  return "desktop";
}
