import type { FastifyInstance } from "fastify";
import type { Db } from "../../db/client.js";
import { registerCollectionRoutes } from "../../http/collection-routes.js";
import { Donation, DonationList, DonationListQuery } from "./donations.schemas.js";
import { getDonation, listDonations } from "./donations.service.js";

export function donationRoutes(app: FastifyInstance, db: Db) {
  registerCollectionRoutes<DonationListQuery>(app, db, {
    collection: "donations",
    singular: "donation",
    permission: "donations:read",
    item: Donation,
    listQuery: DonationListQuery,
    listResponse: DonationList,
    list: listDonations,
    retrieve: getDonation,
  });
}
