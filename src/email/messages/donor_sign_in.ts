import { portalDeliveryLink } from "../../modules/donor-portal/donor-links.service.js";
import { type BaseModel, type EmailMessage, loadBaseModel } from "../render.js";

export interface DonorSignInModel extends BaseModel {
  url: string;
}

/**
 * The portal's sign-in link. Its `url` is stored with the placeholder token; the link is minted (and
 * only its hash stored) when the message is delivered, for the address it goes to.
 */
export const message: EmailMessage<DonorSignInModel> = {
  kind: "donor_sign_in",
  link: portalDeliveryLink("sign_in"),
  async load(tx, row) {
    const base = await loadBaseModel(tx, row.organizationId, row.supporterId);
    const url = (row.data as { url?: unknown }).url;
    if (!base || typeof url !== "string") return null;
    return { ...base, url };
  },
  sample(base, deps) {
    return { ...base, url: `${deps.baseUrl}/donor/${base.organization.slug}/enter?token=sample` };
  },
};
