import type { FastifyInstance } from "fastify";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { registerWriteRoutes } from "../../http/write-routes.js";
import { Campaign, CampaignInput, CampaignList, CampaignListQuery, CampaignPatch } from "./campaigns.schemas.js";
import { createCampaign, getCampaign, listCampaigns, updateCampaign } from "./campaigns.service.js";

export function campaignRoutes(app: FastifyInstance, db: Db) {
  registerCollectionRoutes<CampaignListQuery>(app, db, {
    collection: "campaigns",
    singular: "campaign",
    permission: "campaigns:read",
    item: Campaign,
    listQuery: CampaignListQuery,
    listResponse: CampaignList,
    list: listCampaigns,
    retrieve: getCampaign,
  });
  registerWriteRoutes(app, db, {
    collection: "campaigns",
    singular: "campaign",
    permission: "campaigns:write",
    item: Campaign,
    createBody: CampaignInput,
    updateBody: CampaignPatch,
    create: (scope, body, key) => createCampaign(db, scope, body as CampaignInput, key),
    update: (scope, id, body) => updateCampaign(db, scope, id, body as CampaignPatch),
  });
}
