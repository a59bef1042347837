import type { ReactNode } from "react";
import { Link } from "react-router";
import type { Campaign, Checkout, Donation, Payment, Supporter, SupporterSummary } from "../api/types";
import { type Formatters, frequencyLabel, supporterName } from "../app/format";
import { StateBadge, Tags } from "../components/badges";
import { DateTimeCell } from "../components/data-table";
import type { Translate } from "../i18n";

export type CollectionName = "campaigns" | "supporters" | "donations" | "payments" | "checkouts";

/** Labels, placeholders and options' words are keys of the catalog (panel.filter.*, panel.column.*). */
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
  t: Translate;
}

export interface ColumnDef<T> {
  key: string;
  label: string;
  /** The API's order field, when the column can be sorted. */
  sort?: string;
  numeric?: boolean;
  /** Long text that may wrap (see TableColumn). */
  wrap?: boolean;
  render: (row: T, context: RenderContext) => ReactNode;
}

/** `title` and `emptyText` are keys of the catalog. */
export interface CollectionDef<T extends { id: number }> {
  name: CollectionName;
  title: string;
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

const options = (values: string[]): [string, string][] => values.map((value) => [value, `panel.state.${value}`]);
const FREQUENCIES: [string, string][] = [
  ["0", "panel.frequency.one_off"],
  ["12", "panel.frequency.monthly"],
  ["1", "panel.frequency.yearly"],
];

type DateField = "create_date" | "completed_date" | "payment_date";
const DATE_RANGES: Record<DateField, [string, string]> = {
  create_date: ["panel.filter.created_from", "panel.filter.created_to"],
  completed_date: ["panel.filter.completed_from", "panel.filter.completed_to"],
  payment_date: ["panel.filter.paid_from", "panel.filter.paid_to"],
};

function dateRange(field: DateField): FilterDef[] {
  const [from, to] = DATE_RANGES[field];
  return [
    { name: `${field}_from`, label: from, kind: "date", gqlType: "String" },
    { name: `${field}_to`, label: to, kind: "date", gqlType: "String" },
  ];
}

type Row = { id: number };
const idColumn = <T extends Row>(collection: CollectionName): ColumnDef<T> => ({
  key: "id",
  label: "panel.column.id",
  sort: "id",
  numeric: true,
  render: (row, { path }) => <Link to={path(`${collection}/${row.id}`)}>#{row.id}</Link>,
});

export const SUPPORTER_SUMMARY = "id first_name last_name business_name email erase_date";

const supporterCell = (supporter: SupporterSummary | null, { path, t }: RenderContext) =>
  supporter ? <Link to={path(`supporters/${supporter.id}`)}>{supporterName(t, supporter)}</Link> : "—";
const campaignCell = (campaign: { id: number; title: string } | null, { path }: RenderContext) =>
  campaign ? <Link to={path(`campaigns/${campaign.id}`)}>{campaign.title}</Link> : "—";

const campaigns: CollectionDef<Campaign> = {
  name: "campaigns",
  title: "panel.campaigns.title",
  selection: "id title slug code type goal is_goal_enabled tags archive_date create_date",
  emptyText: "panel.campaigns.empty",
  filters: [
    {
      name: "q",
      label: "panel.filter.search",
      kind: "text",
      gqlType: "String",
      placeholder: "panel.filter.placeholder.campaigns",
    },
    {
      name: "type",
      label: "panel.filter.type",
      kind: "text",
      gqlType: "String",
      placeholder: "panel.filter.placeholder.campaign_type",
    },
    { name: "tag", label: "panel.filter.tag", kind: "text", gqlType: "String" },
    {
      name: "archived",
      label: "panel.filter.status",
      kind: "select",
      gqlType: "Boolean",
      options: [
        ["false", "panel.filter.active"],
        ["true", "panel.filter.archived"],
      ],
    },
    ...dateRange("create_date"),
  ],
  columns: [
    idColumn("campaigns"),
    {
      key: "title",
      label: "panel.column.title",
      sort: "title",
      render: (row, { path }) => <Link to={path(`campaigns/${row.id}`)}>{row.title}</Link>,
    },
    { key: "type", label: "panel.column.type", sort: "type", render: (row) => row.type },
    { key: "slug", label: "panel.column.slug", sort: "slug", render: (row) => row.slug ?? "—" },
    { key: "code", label: "panel.column.code", sort: "code", render: (row) => row.code ?? "—" },
    {
      key: "goal",
      label: "panel.column.goal",
      sort: "goal",
      numeric: true,
      render: (row, { fmt }) => (row.is_goal_enabled ? fmt.money(row.goal) : "—"),
    },
    { key: "tags", label: "panel.column.tags", render: (row) => <Tags tags={row.tags} /> },
    {
      key: "archive_date",
      label: "panel.column.status",
      sort: "archive_date",
      render: (row) => <StateBadge state={row.archive_date ? "archived" : "active"} />,
    },
    {
      key: "create_date",
      label: "panel.column.created",
      sort: "create_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.create_date} fmt={fmt} />,
    },
  ],
};

const supporters: CollectionDef<Supporter> = {
  name: "supporters",
  title: "panel.supporters.title",
  selection: `${SUPPORTER_SUMMARY} city country tags create_date`,
  emptyText: "panel.supporters.empty",
  filters: [
    {
      name: "q",
      label: "panel.filter.search",
      kind: "text",
      gqlType: "String",
      placeholder: "panel.filter.placeholder.supporters",
    },
    { name: "email", label: "panel.filter.exact_email", kind: "text", gqlType: "String" },
    {
      name: "country",
      label: "panel.filter.country",
      kind: "text",
      gqlType: "String",
      placeholder: "panel.filter.placeholder.country",
    },
    { name: "tag", label: "panel.filter.tag", kind: "text", gqlType: "String" },
    ...dateRange("create_date"),
  ],
  columns: [
    idColumn("supporters"),
    {
      key: "last_name",
      label: "panel.column.name",
      sort: "last_name",
      render: (row, context) => supporterCell(row, context),
    },
    { key: "email", label: "panel.column.email", sort: "email", render: (row) => row.email ?? "—" },
    { key: "city", label: "panel.column.city", sort: "city", render: (row) => row.city ?? "—" },
    { key: "country", label: "panel.column.country", sort: "country", render: (row) => row.country ?? "—" },
    { key: "tags", label: "panel.column.tags", render: (row) => <Tags tags={row.tags} /> },
    {
      key: "create_date",
      label: "panel.column.created",
      sort: "create_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.create_date} fmt={fmt} />,
    },
  ],
};

export type DonationRow = Donation & {
  supporter: SupporterSummary | null;
  campaign: { id: number; title: string } | null;
};

const donations: CollectionDef<DonationRow> = {
  name: "donations",
  title: "panel.donations.title",
  selection: `id code state amount currency frequency completed_date create_date supporter { ${SUPPORTER_SUMMARY} } campaign { id title }`,
  emptyText: "panel.donations.empty",
  filters: [
    {
      name: "q",
      label: "panel.filter.code",
      kind: "text",
      gqlType: "String",
      placeholder: "panel.filter.placeholder.donation_code",
    },
    {
      name: "state",
      label: "panel.filter.state",
      kind: "select",
      gqlType: "String",
      options: options(STATES.donations),
    },
    { name: "frequency", label: "panel.filter.frequency", kind: "select", gqlType: "Int", options: FREQUENCIES },
    { name: "campaign_id", label: "panel.filter.campaign", kind: "campaign", gqlType: "Int" },
    { name: "supporter_id", label: "panel.filter.supporter_id", kind: "number", gqlType: "Int" },
    { name: "tag", label: "panel.filter.tag", kind: "text", gqlType: "String" },
    ...dateRange("create_date"),
    ...dateRange("completed_date"),
  ],
  columns: [
    idColumn("donations"),
    {
      key: "code",
      label: "panel.column.code",
      sort: "code",
      render: (row, { path }) => <Link to={path(`donations/${row.id}`)}>{row.code}</Link>,
    },
    {
      key: "supporter",
      label: "panel.column.supporter",
      sort: "supporter_id",
      wrap: true,
      render: (row, context) => supporterCell(row.supporter, context),
    },
    {
      key: "campaign",
      label: "panel.column.campaign",
      sort: "campaign_id",
      wrap: true,
      render: (row, context) => campaignCell(row.campaign, context),
    },
    {
      key: "amount",
      label: "panel.column.amount",
      sort: "amount",
      numeric: true,
      render: (row, { fmt }) => fmt.money(row.amount, row.currency),
    },
    {
      key: "frequency",
      label: "panel.column.frequency",
      sort: "frequency",
      render: (row, { t }) => frequencyLabel(t, row.frequency),
    },
    { key: "state", label: "panel.column.state", sort: "state", render: (row) => <StateBadge state={row.state} /> },
    {
      key: "create_date",
      label: "panel.column.created",
      sort: "create_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.create_date} fmt={fmt} />,
    },
    {
      key: "completed_date",
      label: "panel.column.completed",
      sort: "completed_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.completed_date} fmt={fmt} />,
    },
  ],
};

const payments: CollectionDef<Payment> = {
  name: "payments",
  title: "panel.payments.title",
  selection:
    "id donation_id state amount amount_refunded currency payment_date processor_intent_id create_date payment_method { id label processor }",
  emptyText: "panel.payments.empty",
  filters: [
    {
      name: "state",
      label: "panel.filter.state",
      kind: "select",
      gqlType: "String",
      options: options(STATES.payments),
    },
    { name: "donation_id", label: "panel.filter.donation_id", kind: "number", gqlType: "Int" },
    { name: "processor_intent_id", label: "panel.filter.processor_intent", kind: "text", gqlType: "String" },
    ...dateRange("payment_date"),
    ...dateRange("create_date"),
  ],
  columns: [
    idColumn("payments"),
    {
      key: "donation_id",
      label: "panel.column.donation",
      sort: "donation_id",
      numeric: true,
      render: (row, { path }) => <Link to={path(`donations/${row.donation_id}`)}>#{row.donation_id}</Link>,
    },
    {
      key: "amount",
      label: "panel.column.amount",
      sort: "amount",
      numeric: true,
      render: (row, { fmt }) => fmt.money(row.amount, row.currency),
    },
    { key: "state", label: "panel.column.state", sort: "state", render: (row) => <StateBadge state={row.state} /> },
    {
      key: "method",
      label: "panel.column.method",
      sort: "payment_method_id",
      render: (row) => (row.payment_method ? `${row.payment_method.label} (${row.payment_method.processor})` : "—"),
    },
    {
      key: "payment_date",
      label: "panel.column.paid",
      sort: "payment_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.payment_date} fmt={fmt} />,
    },
    {
      key: "create_date",
      label: "panel.column.created",
      sort: "create_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.create_date} fmt={fmt} />,
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
  title: "panel.checkouts.title",
  selection: CHECKOUT_ROW_SELECTION,
  emptyText: "panel.checkouts.empty",
  filters: [
    {
      name: "q",
      label: "panel.filter.search",
      kind: "text",
      gqlType: "String",
      placeholder: "panel.filter.placeholder.checkouts",
    },
    {
      name: "state",
      label: "panel.filter.state",
      kind: "select",
      gqlType: "String",
      options: options(STATES.checkouts),
    },
    { name: "frequency", label: "panel.filter.frequency", kind: "select", gqlType: "Int", options: FREQUENCIES },
    { name: "campaign_id", label: "panel.filter.campaign", kind: "campaign", gqlType: "Int" },
    { name: "supporter_id", label: "panel.filter.supporter_id", kind: "number", gqlType: "Int" },
    ...dateRange("create_date"),
  ],
  columns: [
    idColumn("checkouts"),
    {
      key: "supporter",
      label: "panel.column.supporter",
      wrap: true,
      render: (row, context) => supporterCell(row.supporter, context),
    },
    {
      key: "campaign",
      label: "panel.column.campaign",
      wrap: true,
      render: (row, context) => campaignCell(row.campaign, context),
    },
    {
      key: "amount",
      label: "panel.column.amount",
      sort: "amount",
      numeric: true,
      render: (row, { fmt }) => fmt.money(row.amount),
    },
    {
      key: "frequency",
      label: "panel.column.frequency",
      sort: "frequency",
      render: (row, { t }) => frequencyLabel(t, row.frequency),
    },
    { key: "state", label: "panel.column.state", sort: "state", render: (row) => <StateBadge state={row.state} /> },
    {
      key: "payment_method_label",
      label: "panel.column.method",
      sort: "payment_method_label",
      render: (row) => row.payment_method_label ?? "—",
    },
    {
      key: "create_date",
      label: "panel.column.created",
      sort: "create_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.create_date} fmt={fmt} />,
    },
    {
      key: "completed_date",
      label: "panel.column.completed",
      sort: "completed_date",
      render: (row, { fmt }) => <DateTimeCell iso={row.completed_date} fmt={fmt} />,
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
