import { and, eq } from "drizzle-orm";
import type { Executor } from "../db/client.js";
import { imageRenditions, images } from "../db/schema.js";

export type ImageRow = typeof images.$inferInsert;
export type RenditionRow = typeof imageRenditions.$inferSelect;

export async function insertImage(tx: Executor, image: ImageRow, renditions: RenditionRow[]) {
  await tx.insert(images).values(image);
  await tx.insert(imageRenditions).values(renditions);
}

/** One width of one of the organization's images. */
export async function findRendition(
  tx: Executor,
  organizationId: number,
  imageId: string,
  width: number,
): Promise<RenditionRow | undefined> {
  const [row] = await tx
    .select()
    .from(imageRenditions)
    .where(
      and(
        eq(imageRenditions.organizationId, organizationId),
        eq(imageRenditions.imageId, imageId),
        eq(imageRenditions.width, width),
      ),
    );
  return row;
}
