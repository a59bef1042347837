import type { ReactNode } from "react";
import { Link } from "react-router";
import type { Campaign, Checkout, Donation, Payment, Supporter, SupporterSummary } from "../api/types";
import { type Formatters, frequencyLabel, supporterName } from "../app/format";
import { StateBadge, Tags } from "../components/badges";

export type CollectionName = "campaigns" | "supporters" | "donations" | "payments" | "checkouts";

export interface FilterDef {
  name: string;
  label: string;
  kind: "text" | "number" | "select" | "date" | "campaign";
  gqlType: "String" | "Int" | "Boolean";
  options?: [string, string][];
  placeholder?: string;
}

export interface RenderContext {
  fmt: Formatters;
  path: (sub?: string) => string;
}

export interface ColumnDef<T> {
  key: string;
  label: string;
  /** The API's order field, when the column can be sorted. */
  sort?: string;
  numeric?: boolean;
  render: (row: T, context: RenderContext) => ReactNode;
}

export interface CollectionDef<T extends { id: number }> {
  name: CollectionName;
  title: string;
  singular: string;
  selection: string;
  filters: FilterDef[];
  columns: ColumnDef<T>[];
  emptyText: string;
}

const STATES = {
  donations: ["draft", "pending", "active", "past_due", "done", "revoked"],
  payments: ["PENDING", "PAID", "REFUNDED", "FAILED"],
  checkouts: ["OPEN", "CLOSED"],
};

const options = (values: string[]): [string, string][] => values.map((value) => [value, value.replace("_", " ")]);
const FREQUENCIES: [string, string][] = [
  ["0", "One-off"],
  ["12", "Monthly"],
  ["1", "Yearly"],
];

function dateRange(field: string, label: string): FilterDef[] {
  return [
    { name: `${field}_from`, label: `${label} from`, kind: "date", gqlType: "String" },
    { name: `${field}_to`, label: `${label} to`, kind: "date", gqlType: "String" },
  ];
}

type Row = { id: number };
const idColumn = <T extends Row>(collection: CollectionName): ColumnDef<T> => ({
  key: "id",
  label: "ID",
  sort: "id",
  numeric: true,
  render: (row, { path }) => <Link to={path(`${collection}/${row.id}`)}>#{row.id}</Link>,
});

export const SUPPORTER_SUMMARY = "id first_name last_name business_name email erase_date";

const supporterCell = (supporter: SupporterSummary | null, { path }: RenderContext) =>
  supporter ? <Link to={path(`supporters/${supporter.id}`)}>{supporterName(supporter)}</Link> : "—";
const campaignCell = (campaign: { id: number; title: string } | null, { path }: RenderContext) =>
  campaign ? <Link to={path(`campaigns/${campaign.id}`)}>{campaign.title}</Link> : "—";

const campaigns: CollectionDef<Campaign> = {
  name: "campaigns",
  title: "Campaigns",
  singular: "campaign",
  selection: "id title slug code type goal is_goal_enabled tags archive_date create_date",
  emptyText: "No campaigns match these filters.",
  filters: [
    { name: "q", label: "Search", kind: "text", gqlType: "String", placeholder: "Title, slug or code" },
    { name: "type", label: "Type", kind: "text", gqlType: "String", placeholder: "e.g. donation" },
    { name: "tag", label: "Tag", kind: "text", gqlType: "String" },
    {
      name: "archived",
      label: "Status",
      kind: "select",
      gqlType: "Boolean",
      options: [
        ["false", "Active"],
        ["true", "Archived"],
      ],
    },
    ...dateRange("create_date", "Created"),
  ],
  columns: [
    idColumn("campaigns"),
    {
      key: "title",
      label: "Title",
      sort: "title",
      render: (row, { path }) => <Link to={path(`campaigns/${row.id}`)}>{row.title}</Link>,
    },
    { key: "type", label: "Type", sort: "type", render: (row) => row.type },
    { key: "slug", label: "Slug", sort: "slug", render: (row) => row.slug ?? "—" },
    { key: "code", label: "Code", sort: "code", render: (row) => row.code ?? "—" },
    {
      key: "goal",
      label: "Goal",
      sort: "goal",
      numeric: true,
      render: (row, { fmt }) => (row.is_goal_enabled ? fmt.money(row.goal) : "—"),
    },
    { key: "tags", label: "Tags", render: (row) => <Tags tags={row.tags} /> },
    {
      key: "archive_date",
      label: "Status",
      sort: "archive_date",
      render: (row) => <StateBadge state={row.archive_date ? "archived" : "active"} />,
    },
    {
      key: "create_date",
      label: "Created",
      sort: "create_date",
      render: (row, { fmt }) => fmt.dateTime(row.create_date),
    },
  ],
};

const supporters: CollectionDef<Supporter> = {
  name: "supporters",
  title: "Supporters",
  singular: "supporter",
  selection: `${SUPPORTER_SUMMARY} city country tags create_date`,
  emptyText: "No supporters match these filters.",
  filters: [
    { name: "q", label: "Search", kind: "text", gqlType: "String", placeholder: "Name or email" },
    { name: "email", label: "Exact email", kind: "text", gqlType: "String" },
    { name: "country", label: "Country", kind: "text", gqlType: "String", placeholder: "e.g. IT" },
    { name: "tag", label: "Tag", kind: "text", gqlType: "String" },
    ...dateRange("create_date", "Created"),
  ],
  columns: [
    idColumn("supporters"),
    {
      key: "last_name",
      label: "Name",
      sort: "last_name",
      render: (row, context) => supporterCell(row, context),
    },
    { key: "email", label: "Email", sort: "email", render: (row) => row.email ?? "—" },
    { key: "city", label: "City", sort: "city", render: (row) => row.city ?? "—" },
    { key: "country", label: "Country", sort: "country", render: (row) => row.country ?? "—" },
    { key: "tags", label: "Tags", render: (row) => <Tags tags={row.tags} /> },
    {
      key: "create_date",
      label: "Created",
      sort: "create_date",
      render: (row, { fmt }) => fmt.dateTime(row.create_date),
    },
  ],
};

export type DonationRow = Donation & {
  supporter: SupporterSummary | null;
  campaign: { id: number; title: string } | null;
};

const donations: CollectionDef<DonationRow> = {
  name: "donations",
  title: "Donations",
  singular: "donation",
  selection: `id code state amount currency frequency completed_date create_date supporter { ${SUPPORTER_SUMMARY} } campaign { id title }`,
  emptyText: "No donations match these filters.",
  filters: [
    { name: "q", label: "Code", kind: "text", gqlType: "String", placeholder: "Donation code" },
    { name: "state", label: "State", kind: "select", gqlType: "String", options: options(STATES.donations) },
    { name: "frequency", label: "Frequency", kind: "select", gqlType: "Int", options: FREQUENCIES },
    { name: "campaign_id", label: "Campaign", kind: "campaign", gqlType: "Int" },
    { name: "supporter_id", label: "Supporter ID", kind: "number", gqlType: "Int" },
    { name: "tag", label: "Tag", kind: "text", gqlType: "String" },
    ...dateRange("create_date", "Created"),
    ...dateRange("completed_date", "Completed"),
  ],
  columns: [
    idColumn("donations"),
    {
      key: "code",
      label: "Code",
      sort: "code",
      render: (row, { path }) => <Link to={path(`donations/${row.id}`)}>{row.code}</Link>,
    },
    {
      key: "supporter",
      label: "Supporter",
      sort: "supporter_id",
      render: (row, context) => supporterCell(row.supporter, context),
    },
    {
      key: "campaign",
      label: "Campaign",
      sort: "campaign_id",
      render: (row, context) => campaignCell(row.campaign, context),
    },
    {
      key: "amount",
      label: "Amount",
      sort: "amount",
      numeric: true,
      render: (row, { fmt }) => fmt.money(row.amount, row.currency),
    },
    { key: "frequency", label: "Frequency", sort: "frequency", render: (row) => frequencyLabel(row.frequency) },
    { key: "state", label: "State", sort: "state", render: (row) => <StateBadge state={row.state} /> },
    {
      key: "create_date",
      label: "Created",
      sort: "create_date",
      render: (row, { fmt }) => fmt.dateTime(row.create_date),
    },
    {
      key: "completed_date",
      label: "Completed",
      sort: "completed_date",
      render: (row, { fmt }) => fmt.dateTime(row.completed_date),
    },
  ],
};

const payments: CollectionDef<Payment> = {
  name: "payments",
  title: "Payments",
  singular: "payment",
  selection:
    "id donation_id state amount amount_refunded currency payment_date processor_intent_id create_date payment_method { id label processor }",
  emptyText: "No payments match these filters.",
  filters: [
    { name: "state", label: "State", kind: "select", gqlType: "String", options: options(STATES.payments) },
    { name: "donation_id", label: "Donation ID", kind: "number", gqlType: "Int" },
    { name: "processor_intent_id", label: "Processor intent", kind: "text", gqlType: "String" },
    ...dateRange("payment_date", "Paid"),
    ...dateRange("create_date", "Created"),
  ],
  columns: [
    idColumn("payments"),
    {
      key: "donation_id",
      label: "Donation",
      sort: "donation_id",
      numeric: true,
      render: (row, { path }) => <Link to={path(`donations/${row.donation_id}`)}>#{row.donation_id}</Link>,
    },
    {
      key: "amount",
      label: "Amount",
      sort: "amount",
      numeric: true,
      render: (row, { fmt }) => fmt.money(row.amount, row.currency),
    },
    { key: "state", label: "State", sort: "state", render: (row) => <StateBadge state={row.state} /> },
    {
      key: "method",
      label: "Method",
      sort: "payment_method_id",
      render: (row) => (row.payment_method ? `${row.payment_method.label} (${row.payment_method.processor})` : "—"),
    },
    {
      key: "payment_date",
      label: "Paid",
      sort: "payment_date",
      render: (row, { fmt }) => fmt.dateTime(row.payment_date),
    },
    {
      key: "create_date",
      label: "Created",
      sort: "create_date",
      render: (row, { fmt }) => fmt.dateTime(row.create_date),
    },
  ],
};

export type CheckoutRow = Checkout & {
  supporter: SupporterSummary | null;
  campaign: { id: number; title: string } | null;
};

export const CHECKOUT_ROW_SELECTION = `id state amount frequency payment_method_label completed_date create_date supporter { ${SUPPORTER_SUMMARY} } campaign { id title }`;

const checkouts: CollectionDef<CheckoutRow> = {
  name: "checkouts",
  title: "Checkouts",
  singular: "checkout",
  selection: CHECKOUT_ROW_SELECTION,
  emptyText: "No checkouts match these filters.",
  filters: [
    { name: "q", label: "Search", kind: "text", gqlType: "String", placeholder: "Name, email, campaign, code or id" },
    { name: "state", label: "State", kind: "select", gqlType: "String", options: options(STATES.checkouts) },
    { name: "frequency", label: "Frequency", kind: "select", gqlType: "Int", options: FREQUENCIES },
    { name: "campaign_id", label: "Campaign", kind: "campaign", gqlType: "Int" },
    { name: "supporter_id", label: "Supporter ID", kind: "number", gqlType: "Int" },
    ...dateRange("create_date", "Created"),
  ],
  columns: [
    idColumn("checkouts"),
    { key: "supporter", label: "Supporter", render: (row, context) => supporterCell(row.supporter, context) },
    { key: "campaign", label: "Campaign", render: (row, context) => campaignCell(row.campaign, context) },
    { key: "amount", label: "Amount", sort: "amount", numeric: true, render: (row, { fmt }) => fmt.money(row.amount) },
    { key: "frequency", label: "Frequency", sort: "frequency", render: (row) => frequencyLabel(row.frequency) },
    { key: "state", label: "State", sort: "state", render: (row) => <StateBadge state={row.state} /> },
    {
      key: "payment_method_label",
      label: "Method",
      sort: "payment_method_label",
      render: (row) => row.payment_method_label ?? "—",
    },
    {
      key: "create_date",
      label: "Created",
      sort: "create_date",
      render: (row, { fmt }) => fmt.dateTime(row.create_date),
    },
    {
      key: "completed_date",
      label: "Completed",
      sort: "completed_date",
      render: (row, { fmt }) => fmt.dateTime(row.completed_date),
    },
  ],
};

// biome-ignore lint/suspicious/noExplicitAny: each definition has its own row type.
export const COLLECTIONS: Record<CollectionName, CollectionDef<any>> = {
  campaigns,
  supporters,
  donations,
  payments,
  checkouts,
};
