import { withStepUp } from "./step-up";

/** A field-level problem reported by the server (`extensions.errors[]`). */
export interface FieldIssue {
  field?: string;
  parameter?: string;
  message: string;
  /** The problem's stable code: the panel words it in its own language (fields.<code>). */
  code?: string;
  values?: Record<string, string | number>;
}

let wordIssue: (issue: FieldIssue) => string = (issue) => issue.message;

/** How a field's issue is worded: set by the panel's language (src/i18n.tsx). */
export function setIssueWording(word: (issue: FieldIssue) => string): void {
  wordIssue = word;
}

/** A failed request: network, HTTP or GraphQL. `code` is the server's stable snake_case code. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly issues: FieldIssue[] = [],
  ) {
    super(message);
  }

  /** Issues keyed by the top-level field name (`asks.0` → `asks`). */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const issue of this.issues) {
      const key = (issue.field ?? issue.parameter ?? "").split(/[.[/]/)[0] ?? "";
      if (key && !out[key]) out[key] = wordIssue(issue);
    }
    return out;
  }
}

interface GraphQLResponse<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; errors?: FieldIssue[] } }[];
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when the session is gone (401), so the app can send the user to sign in. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

function notifyUnauthorized() {
  for (const listener of unauthorizedListeners) listener();
}

export const GRAPHQL_PATH = "/admin/graphql/";

/**
 * One GraphQL request for the organization `org`, with the session cookie. A sensitive change answered
 * `step_up_required` asks the user to confirm it is them (src/auth/step-up.ts on the server), then is sent
 * once more.
 */
export async function graphql<T>(
  org: string,
  query: string,
  variables: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<T> {
  return withStepUp(() => graphqlOnce<T>(org, query, variables, signal));
}

async function graphqlOnce<T>(
  org: string,
  query: string,
  variables: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(GRAPHQL_PATH, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json", "x-donata-organization": org },
      body: JSON.stringify({ query, variables }),
      signal,
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
  let body: GraphQLResponse<T> | undefined;
  try {
    body = (await response.json()) as GraphQLResponse<T>;
  } catch {
    body = undefined;
  }
  const first = body?.errors?.[0];
  if (response.status === 401) notifyUnauthorized();
  if (first) {
    throw new ApiError(
      first.message,
      first.extensions?.code ?? "graphql_error",
      response.status,
      first.extensions?.errors ?? [],
    );
  }
  if (!response.ok || !body?.data) {
    throw new ApiError(`The server answered ${response.status}. Try again.`, "http_error", response.status);
  }
  return body.data;
}
