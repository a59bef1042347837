import type { Operations } from "./generated/openapi-types.js";

/** Wire shapes, named after the operations of the server's OpenAPI document (generated, never hand-written). */
type Ok<Id extends keyof Operations> = Operations[Id]["responses"] extends { 200: infer Body }
  ? Body
  : Operations[Id]["responses"] extends { 201: infer Body }
    ? Body
    : never;

export type { Operations, Problem } from "./generated/openapi-types.js";

export interface Page<Item> {
  items: Item[];
  /** Total number of results, ignoring limit and offset. */
  count: number;
}

export type Checkout = Ok<"retrieve_checkout">;
export type Donation = Ok<"retrieve_donation">;
export type Payment = Ok<"retrieve_payment">;
export type Supporter = Ok<"retrieve_supporter">;
export type Campaign = Ok<"retrieve_campaign">;

export type CheckoutListParams = Operations["list_checkouts"]["query"];
export type DonationListParams = Operations["list_donations"]["query"];
export type PaymentListParams = Operations["list_payments"]["query"];
export type SupporterListParams = Operations["list_supporters"]["query"];
export type CampaignListParams = Operations["list_campaigns"]["query"];

export type OfflineDonationInput = Operations["record_offline_donation"]["body"];
export type OfflineDonationResult = Ok<"record_offline_donation">;
export type RefundResult = Ok<"refund_payment">;
export type MarkPaidResult = Ok<"mark_payment_paid">;
export type CancelDonationResult = Ok<"cancel_donation">;

export type SupporterInput = Operations["create_supporter"]["body"];
export type SupporterPatch = Operations["update_supporter"]["body"];
export type CampaignInput = Operations["create_campaign"]["body"];
export type CampaignPatch = Operations["update_campaign"]["body"];

export type Event = Ok<"retrieve_event">;
export type EventPage = Ok<"list_events">;
export type EventListParams = Operations["list_events"]["query"];

export type WebhookEndpoint = Ok<"retrieve_webhook_endpoint">;
export type WebhookEndpointWithSecret = Ok<"create_webhook_endpoint">;
export type WebhookEndpointInput = Operations["create_webhook_endpoint"]["body"];
export type WebhookEndpointPatch = Operations["update_webhook_endpoint"]["body"];
export type WebhookDelivery = Ok<"retry_webhook_delivery">;
export type WebhookDeliveryPage = Ok<"list_webhook_deliveries">;
export type WebhookDeliveryListParams = Operations["list_webhook_deliveries"]["query"];
