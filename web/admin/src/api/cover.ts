import { ApiError } from "./graphql";
import { problem } from "./session";

/** A campaign's cover image (src/modules/campaigns/cover.routes.ts): the body is the image itself. */
async function send(org: string, campaignId: number, init: RequestInit): Promise<{ cover_image_url: string | null }> {
  let response: Response;
  try {
    response = await fetch(
      `/admin/campaigns/${encodeURIComponent(String(campaignId))}/cover?${new URLSearchParams({ organization: org })}`,
      { credentials: "same-origin", ...init, headers: { accept: "application/json", ...init.headers } },
    );
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
  if (!response.ok) throw await problem(response);
  return (await response.json()) as { cover_image_url: string | null };
}

/** Uploads a PNG, JPEG or WebP file as the campaign's cover; the server checks and resizes it. */
export function uploadCover(org: string, campaignId: number, file: File) {
  return send(org, campaignId, {
    method: "PUT",
    headers: { "content-type": file.type || "application/octet-stream" },
    body: file,
  });
}

/** Takes the cover off the campaign's page. */
export function removeCover(org: string, campaignId: number) {
  return send(org, campaignId, { method: "DELETE" });
}
