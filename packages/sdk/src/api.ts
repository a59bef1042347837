import type { DonataClient } from "./client.js";
import { DonataApiError, DonataGraphQLError, type GraphQLErrorEntry } from "./errors.js";
import { randomToken } from "./pkce.js";
import type {
  Campaign,
  CampaignInput,
  CampaignListParams,
  CampaignPatch,
  CancelDonationResult,
  Checkout,
  CheckoutListParams,
  Donation,
  DonationListParams,
  Event,
  EventListParams,
  EventPage,
  MarkPaidResult,
  OfflineDonationInput,
  OfflineDonationResult,
  Page,
  Payment,
  PaymentListParams,
  RefundResult,
  Supporter,
  SupporterInput,
  SupporterListParams,
  SupporterPatch,
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointInput,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from "./types.js";

type QueryValue = string | number | boolean | null | undefined;

export interface RequestOptions {
  method?: "GET" | "POST" | "PATCH" | "DELETE";
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Sends authenticated requests for one organization; implemented by DonataApi. */
export interface Requester {
  request<T>(path: string, options?: RequestOptions): Promise<T>;
}

const DEFAULT_PAGE_SIZE = 100;

/** A paginated REST collection: `list`, `retrieve` and `iterate` over every page. */
export class Collection<Item, ListParams extends { limit?: number; offset?: number }> {
  constructor(
    protected readonly requester: Requester,
    /** e.g. `/api/v1/checkouts/`. */
    protected readonly path: string,
  ) {}

  /** One page: `{ items, count }`, `count` being the total ignoring limit and offset. */
  list(params?: ListParams): Promise<Page<Item>> {
    return this.requester.request<Page<Item>>(this.path, { query: params as Record<string, QueryValue> });
  }

  retrieve(id: number | string): Promise<Item> {
    return this.requester.request<Item>(`${this.path}${encodeURIComponent(String(id))}`);
  }

  /**
   * Every item matching `params`, page after page: `offset` advances by `limit` until it reaches
   * `count` (spec §4.1). Pages are fetched lazily, as the loop asks for more.
   */
  async *iterate(params?: ListParams): AsyncGenerator<Item, void, undefined> {
    const limit = params?.limit ?? DEFAULT_PAGE_SIZE;
    let offset = params?.offset ?? 0;
    for (;;) {
      const page = await this.list({ ...params, limit, offset } as ListParams);
      yield* page.items;
      offset += limit;
      // An empty page ends the walk too, should rows vanish while walking.
      if (offset >= page.count || page.items.length === 0) return;
    }
  }

  protected post<T>(suffix: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    return this.requester.request<T>(`${this.path}${suffix}`, { method: "POST", body, headers });
  }
}

/** A collection that applications also create and edit: `create` (idempotent) and `update`. */
export class WritableCollection<
  Item,
  ListParams extends { limit?: number; offset?: number },
  Input,
  Patch,
> extends Collection<Item, ListParams> {
  /**
   * Creates one. Pass your own `idempotencyKey` (kept with what you are creating) so that a retry after
   * a timeout answers the first result instead of creating a second; without one a random key is sent.
   */
  create(body: Input, options: { idempotencyKey?: string } = {}): Promise<Item> {
    return this.post("", body, { "idempotency-key": options.idempotencyKey ?? randomToken(16) });
  }

  /** Changes the fields sent; omitted fields stay, null clears. */
  update(id: number | string, patch: Patch): Promise<Item> {
    return this.requester.request<Item>(`${this.path}${encodeURIComponent(String(id))}`, {
      method: "PATCH",
      body: patch,
    });
  }
}

export class CheckoutsResource extends Collection<Checkout, CheckoutListParams> {}
export class SupportersResource extends WritableCollection<
  Supporter,
  SupporterListParams,
  SupporterInput,
  SupporterPatch
> {}
export class CampaignsResource extends WritableCollection<Campaign, CampaignListParams, CampaignInput, CampaignPatch> {}

/** What changed in the organization, in commit order (`GET /api/v1/events/`). */
export class EventsResource {
  constructor(private readonly requester: Requester) {}

  /** One page after `after` (from the oldest event kept without it): `{ items, next_cursor, has_more }`. */
  list(params?: EventListParams): Promise<EventPage> {
    return this.requester.request<EventPage>("/api/v1/events/", { query: params as Record<string, QueryValue> });
  }

  retrieve(id: string): Promise<Event> {
    return this.requester.request<Event>(`/api/v1/events/${encodeURIComponent(id)}`);
  }

  /**
   * Every event after `after`, page after page, until the feed is caught up. Store the `cursor` of the
   * last event you handled and pass it as `after` next time: no event is missed or handled twice.
   */
  async *iterate(
    params: Omit<EventListParams, "limit"> & { limit?: number } = {},
  ): AsyncGenerator<Event, void, undefined> {
    let after = params.after;
    for (;;) {
      const page = await this.list({ ...params, ...(after === undefined ? {} : { after }) } as EventListParams);
      yield* page.items;
      after = page.next_cursor;
      if (!page.has_more) return;
    }
  }
}

/**
 * The application's own webhook endpoints in the organization (`/api/v1/webhook_endpoints/`): the
 * secret comes once, from `create` and `rotateSecret`; verify deliveries with `webhooks.verify`.
 */
export class WebhookEndpointsResource {
  private readonly path = "/api/v1/webhook_endpoints/";
  constructor(private readonly requester: Requester) {}

  /**
   * A new endpoint and its secret. A retry with the same `idempotencyKey` (without one a random key is
   * sent) answers the first endpoint and secret instead of making a second.
   */
  create(body: WebhookEndpointInput, options: { idempotencyKey?: string } = {}): Promise<WebhookEndpointWithSecret> {
    return this.requester.request(this.path, {
      method: "POST",
      body,
      headers: { "idempotency-key": options.idempotencyKey ?? randomToken(16) },
    });
  }

  async list(): Promise<WebhookEndpoint[]> {
    return (await this.requester.request<{ items: WebhookEndpoint[] }>(this.path)).items;
  }

  retrieve(id: number | string): Promise<WebhookEndpoint> {
    return this.requester.request(`${this.path}${encodeURIComponent(String(id))}`);
  }

  update(id: number | string, body: WebhookEndpointPatch): Promise<WebhookEndpoint> {
    return this.requester.request(`${this.path}${encodeURIComponent(String(id))}`, { method: "PATCH", body });
  }

  delete(id: number | string): Promise<void> {
    return this.requester.request(`${this.path}${encodeURIComponent(String(id))}`, { method: "DELETE" });
  }

  /** A new secret; the previous one still signs for 24 hours. A retry with the same `idempotencyKey` answers the same secret. */
  rotateSecret(id: number | string, options: { idempotencyKey?: string } = {}): Promise<WebhookEndpointWithSecret> {
    return this.requester.request(`${this.path}${encodeURIComponent(String(id))}/rotate_secret`, {
      method: "POST",
      headers: { "idempotency-key": options.idempotencyKey ?? randomToken(16) },
    });
  }

  /** The endpoint's deliveries, newest first, each with its attempts; pass `next_before` as `before` for older ones. */
  deliveries(id: number | string, params?: WebhookDeliveryListParams): Promise<WebhookDeliveryPage> {
    return this.requester.request(`${this.path}${encodeURIComponent(String(id))}/deliveries`, {
      query: params as Record<string, QueryValue>,
    });
  }

  /** Sends one delivery again now, under the same webhook-id. */
  retryDelivery(id: number | string, deliveryId: number | string): Promise<WebhookDelivery> {
    return this.requester.request(
      `${this.path}${encodeURIComponent(String(id))}/deliveries/${encodeURIComponent(String(deliveryId))}/retry`,
      { method: "POST" },
    );
  }

  /** Sends again every event of the endpoint's types since a time; how many were queued. */
  resend(id: number | string, since: Date | string): Promise<{ queued: number }> {
    return this.requester.request(`${this.path}${encodeURIComponent(String(id))}/resend`, {
      method: "POST",
      body: { since: since instanceof Date ? since.toISOString() : since },
    });
  }
}

export class PaymentsResource extends Collection<Payment, PaymentListParams> {
  /**
   * Refunds a PAID payment (409 `invalid_state` otherwise): what is left of it, or `amount`. The
   * payment is REFUNDED once the processor confirmed its whole amount refunded.
   */
  refund(id: number | string, options: { amount?: number } = {}): Promise<RefundResult> {
    const body = options.amount === undefined ? undefined : { amount: options.amount };
    return this.post(`${encodeURIComponent(String(id))}/refund`, body);
  }

  /** Records that a PENDING manual payment was received. */
  markPaid(id: number | string): Promise<MarkPaidResult> {
    return this.post(`${encodeURIComponent(String(id))}/mark_paid`);
  }
}

export class DonationsResource extends Collection<Donation, DonationListParams> {
  /** Cancels a recurring donation: no further renewal is charged. */
  cancel(id: number | string): Promise<CancelDonationResult> {
    return this.post(`${encodeURIComponent(String(id))}/cancel`);
  }

  /**
   * Records a gift received outside Donata (cash, cheque). Pass your own `idempotencyKey` (stored with
   * the gift you are recording) so that retrying after a timeout cannot record it twice; without one a
   * random key is sent, which protects nothing across retries.
   */
  createOffline(body: OfflineDonationInput, options: { idempotencyKey?: string } = {}): Promise<OfflineDonationResult> {
    return this.post("", body, { "idempotency-key": options.idempotencyKey ?? randomToken(16) });
  }
}

export interface GraphQLResponse<Data> {
  data?: Data | null;
  errors?: GraphQLErrorEntry[];
}

/**
 * The Donata API as one organization's installation of the application. Tokens come from the client's
 * token store; they are renewed shortly before expiry, and once more after a 401.
 */
export class DonataApi implements Requester {
  readonly checkouts: CheckoutsResource;
  readonly donations: DonationsResource;
  readonly payments: PaymentsResource;
  readonly supporters: SupportersResource;
  readonly campaigns: CampaignsResource;
  readonly events: EventsResource;
  readonly webhookEndpoints: WebhookEndpointsResource;

  constructor(
    private readonly client: DonataClient,
    readonly organization: string,
  ) {
    this.checkouts = new CheckoutsResource(this, "/api/v1/checkouts/");
    this.donations = new DonationsResource(this, "/api/v1/donations/");
    this.payments = new PaymentsResource(this, "/api/v1/payments/");
    this.supporters = new SupportersResource(this, "/api/v1/supporters/");
    this.campaigns = new CampaignsResource(this, "/api/v1/campaigns/");
    this.events = new EventsResource(this);
    this.webhookEndpoints = new WebhookEndpointsResource(this);
  }

  /** A REST call under the base URL; problem bodies become DonataApiError. */
  async request<T>(path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(`${this.client.baseUrl}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const response = await this.#send(url.href, {
      method: options.method ?? "GET",
      headers: {
        accept: "application/json, application/problem+json",
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
        ...options.headers,
      },
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    });
    if (!response.ok) throw await DonataApiError.fromResponse(response);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /** A GraphQL operation on `/admin/graphql/`; `errors` in the response become DonataGraphQLError. */
  async graphql<Data = Record<string, unknown>, Variables extends Record<string, unknown> = Record<string, unknown>>(
    query: string,
    variables?: Variables,
  ): Promise<Data> {
    const response = await this.#send(`${this.client.baseUrl}/admin/graphql/`, {
      method: "POST",
      headers: { accept: "application/graphql-response+json, application/json", "content-type": "application/json" },
      body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
    });
    let body: GraphQLResponse<Data>;
    try {
      body = (await response.json()) as GraphQLResponse<Data>;
    } catch {
      throw new DonataGraphQLError(
        [{ message: `HTTP ${response.status} without a GraphQL body` }],
        null,
        response.status,
      );
    }
    if (body.errors?.length || !response.ok || body.data == null) {
      throw new DonataGraphQLError(
        body.errors ?? [{ message: `HTTP ${response.status}` }],
        body.data ?? null,
        response.status,
      );
    }
    return body.data;
  }

  /** Sends with a valid access token; after a 401, refreshes once and tries again, then gives up. */
  async #send(url: string, init: RequestInit & { headers: Record<string, string> }): Promise<Response> {
    const attempt = (accessToken: string) =>
      this.client.fetch(url, { ...init, headers: { ...init.headers, authorization: `Bearer ${accessToken}` } });
    const tokens = await this.client.validTokens(this.organization);
    const response = await attempt(tokens.accessToken);
    if (response.status !== 401) return response;
    await response.body?.cancel();
    const renewed = await this.client.refresh(this.organization, tokens.accessToken);
    return attempt(renewed.accessToken);
  }
}
