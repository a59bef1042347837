/** The organization a request acts for: every read and write is scoped by it. */
export interface Scope {
  organizationId: number;
  timeZone: string;
}
