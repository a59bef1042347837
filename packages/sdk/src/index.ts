export {
  CampaignsResource,
  CheckoutsResource,
  Collection,
  DonataApi,
  DonationsResource,
  EventsResource,
  type GraphQLResponse,
  PaymentsResource,
  type RequestOptions,
  SupportersResource,
  WebhookEndpointsResource,
  WritableCollection,
} from "./api.js";
export { type CallbackResult, DonataClient, type DonataClientOptions, type TokenResponse } from "./client.js";
export {
  AuthorizationError,
  DonataApiError,
  DonataError,
  DonataGraphQLError,
  type GraphQLErrorEntry,
  InvalidStateError,
  type InvalidStateReason,
  OAuthTokenError,
  type ProblemFieldError,
  ReauthorizationRequiredError,
} from "./errors.js";
export { base64url, codeChallengeS256, createCodeVerifier, randomToken } from "./pkce.js";
export {
  MemoryStateStore,
  MemoryTokenStore,
  type PendingAuthorization,
  type StateStore,
  type TokenSet,
  type TokenStore,
} from "./stores.js";
export type * from "./types.js";
export {
  type VerifyOptions,
  verifyWebhook,
  type WebhookHeaders,
  WebhookVerificationError,
  webhooks,
} from "./webhooks.js";
