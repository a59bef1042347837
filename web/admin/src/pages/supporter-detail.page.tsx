import { useState } from "react";
import { Link, useLocation, useParams } from "react-router";
import type { Supporter } from "../api/types";
import { supporterName, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { Tags } from "../components/badges";
import { DataTable } from "../components/data-table";
import { Fields, PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty, InlineError } from "../components/states";
import { useI18n } from "../i18n";
import { CHECKOUT_ROW_SELECTION, type CheckoutRow, COLLECTIONS, type DonationRow } from "./collections";
import { SupporterNotFound } from "./supporter-merge";
import { SupporterNotes } from "./supporter-notes";

const SUPPORTER_FIELDS = `id code first_name last_name business_name email phone mobile job sex date_of_birth place_of_birth
  ssn vat address address2 city locality postal_code country note image privacy email_marketing phone_marketing
  sms_marketing postal_marketing profilation_marketing certification_url erase_date tags create_date update_date`;

const QUERY = `query SupporterDetail($id: ID!, $supporter_id: Int!) {
  supporter(id: $id) { ${SUPPORTER_FIELDS} }
  donations(supporter_id: $supporter_id, limit: 20) { count items { ${COLLECTIONS.donations.selection} } }
  checkouts(supporter_id: $supporter_id, limit: 10) { count items { ${CHECKOUT_ROW_SELECTION} } }
}`;
const UPDATE_CONSENTS = `mutation Consents($id: ID!, $input: SupporterPatch!) { updateSupporter(id: $id, input: $input) { id } }`;
const EXPORT = `mutation Export($id: ID!) {
  exportSupporter(id: $id) {
    export_date
    supporter { ${SUPPORTER_FIELDS} }
    donations { id code state amount currency frequency campaign_id completed_date create_date update_date note device tags receipt_url }
    payments { id donation_id state amount currency payment_date processor_intent_id create_date update_date payment_method { id label processor } }
  }
}`;
const ERASE = `mutation Erase($id: ID!) { eraseSupporter(id: $id) { id erase_date } }`;

const CONSENTS = [
  ["privacy", "panel.supporter.consent.privacy"],
  ["email_marketing", "panel.supporter.consent.email_marketing"],
  ["phone_marketing", "panel.supporter.consent.phone_marketing"],
  ["sms_marketing", "panel.supporter.consent.sms_marketing"],
  ["postal_marketing", "panel.supporter.consent.postal_marketing"],
  ["profilation_marketing", "panel.supporter.consent.profilation_marketing"],
] as const;
type Consent = (typeof CONSENTS)[number][0];

function ConsentsForm({
  supporter,
  canWrite,
  onSaved,
}: {
  supporter: Supporter;
  canWrite: boolean;
  onSaved: () => void;
}) {
  const { t } = useI18n();
  const gql = useGraphql();
  const [values, setValues] = useState<Record<Consent, boolean | null>>(
    () => Object.fromEntries(CONSENTS.map(([key]) => [key, supporter[key]])) as Record<Consent, boolean | null>,
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  const dirty = CONSENTS.some(([key]) => values[key] !== supporter[key]);
  const erased = Boolean(supporter.erase_date);
  return (
    <form
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        setError(null);
        try {
          await gql(UPDATE_CONSENTS, { id: supporter.id, input: values });
          setSaved(true);
          onSaved();
        } catch (caught) {
          setError(caught as Error);
        } finally {
          setBusy(false);
        }
      }}
    >
      <ul className="consents" data-testid="consents">
        {CONSENTS.map(([key, label]) => (
          <li key={key}>
            <label className="checkbox">
              <input
                type="checkbox"
                name={key}
                checked={values[key] === true}
                disabled={!canWrite || erased}
                onChange={(event) => {
                  setSaved(false);
                  setValues((current) => ({ ...current, [key]: event.target.checked }));
                }}
              />
              {t(label)}
              {values[key] === null && <span className="muted small"> {t("panel.supporter.not_asked")}</span>}
            </label>
          </li>
        ))}
      </ul>
      <InlineError error={error} />
      {canWrite && !erased && (
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={!dirty || busy}>
            {busy ? t("panel.common.saving") : t("panel.supporter.save_consents")}
          </button>
          {saved && !dirty && (
            <span role="status" className="muted">
              {t("panel.common.saved")}
            </span>
          )}
        </div>
      )}
    </form>
  );
}

function download(filename: string, content: string) {
  const url = URL.createObjectURL(new Blob([content], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function SupporterDetailPage() {
  const { id = "" } = useParams();
  const { org, path, canWrite } = useOrg();
  const { t, rich } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  const location = useLocation();
  const [flash, setFlash] = useState<string | null>((location.state as { flash?: string } | null)?.flash ?? null);
  const [exportError, setExportError] = useState<Error | null>(null);
  const [exporting, setExporting] = useState(false);
  const state = useQuery<{
    supporter: Supporter | null;
    donations: { count: number; items: DonationRow[] };
    checkouts: { count: number; items: CheckoutRow[] };
  }>(QUERY, { id, supporter_id: /^\d+$/.test(id) ? Number(id) : 0 });
  usePageTitle(
    state.data?.supporter ? supporterName(t, state.data.supporter) : t("panel.supporter.page_title"),
    org.name,
  );
  const crumbs = [{ label: t("panel.supporters.title"), to: path("supporters") }];

  const exportData = async (supporter: Supporter) => {
    setExporting(true);
    setExportError(null);
    try {
      const data = await gql<{ exportSupporter: unknown }>(EXPORT, { id: supporter.id });
      download(`supporter-${supporter.id}-export.json`, JSON.stringify(data.exportSupporter, null, 2));
      setFlash(t("panel.supporter.export_downloaded"));
    } catch (caught) {
      setExportError(caught as Error);
    } finally {
      setExporting(false);
    }
  };

  return (
    <Async state={state}>
      {({ supporter, donations, checkouts }) => {
        if (!supporter) {
          // Another id's answer while this one loads (a merged supporter's link to the kept one) says nothing yet.
          if (state.loading) return null;
          return <SupporterNotFound id={id} crumbs={crumbs} />;
        }
        const donationColumns = COLLECTIONS.donations.columns
          .filter((column) => column.key !== "supporter")
          .map((column) => ({
            ...column,
            label: t(column.label),
            sort: undefined,
            render: (row: DonationRow) => column.render(row, { fmt, path, t }),
          }));
        const checkoutColumns = COLLECTIONS.checkouts.columns
          .filter((column) => column.key !== "supporter")
          .map((column) => ({
            ...column,
            label: t(column.label),
            sort: undefined,
            render: (row: CheckoutRow) => column.render(row, { fmt, path, t }),
          }));
        const erased = Boolean(supporter.erase_date);
        return (
          <>
            <PageHeader
              title={supporterName(t, supporter)}
              crumbs={crumbs}
              actions={
                <>
                  {canWrite && !erased && (
                    <Link className="button" to={path(`supporters/${supporter.id}/edit`)} data-testid="edit-supporter">
                      {t("panel.supporter.edit")}
                    </Link>
                  )}
                  <Link
                    className="button"
                    to={`${path("outbox")}?supporter_id=${supporter.id}`}
                    data-testid="supporter-emails"
                  >
                    {t("panel.supporter.emails")}
                  </Link>
                  {canWrite && !erased && (
                    <Link className="button" to={`${path("donations/new")}?supporter_id=${supporter.id}`}>
                      {t("panel.collections.record_offline")}
                    </Link>
                  )}
                  {canWrite && (
                    <button
                      type="button"
                      className="button"
                      onClick={() => exportData(supporter)}
                      disabled={exporting}
                      data-testid="export-supporter"
                    >
                      {exporting ? t("panel.supporter.exporting") : t("panel.supporter.export")}
                    </button>
                  )}
                  {canWrite && !erased && (
                    <ActionButton
                      label={t("panel.supporter.erase")}
                      title={t("panel.supporter.erase_title")}
                      confirmLabel={t("panel.supporter.erase_confirm")}
                      danger
                      testId="erase-supporter"
                      run={() => gql(ERASE, { id: supporter.id })}
                      onDone={() => {
                        setFlash(t("panel.supporter.erased"));
                        state.reload();
                      }}
                    >
                      <p>
                        {rich("panel.supporter.erase_body", {
                          name: <strong>{supporterName(t, supporter)}</strong>,
                        })}
                      </p>
                      <p>{t("panel.supporter.erase_export_first")}</p>
                    </ActionButton>
                  )}
                </>
              }
            >
              <p className="muted">
                {t("panel.supporter.numbered", { id: supporter.id })}
                {supporter.code ? ` · ${t("panel.supporter.code", { code: supporter.code })}` : ""} ·{" "}
                {t("panel.supporter.since", { date: fmt.date(supporter.create_date) })}
                {erased ? ` · ${t("panel.supporter.erased_on", { date: fmt.dateTime(supporter.erase_date) })}` : ""}
              </p>
            </PageHeader>
            <Flash message={flash} />
            <InlineError error={exportError} />
            <div className="grid-2">
              <Section title={t("panel.supporter.profile")} id="profile">
                <Fields
                  items={[
                    [
                      t("panel.column.email"),
                      supporter.email ? (
                        <a key="k244" href={`mailto:${supporter.email}`}>
                          {supporter.email}
                        </a>
                      ) : null,
                    ],
                    [t("panel.supporter.field.business_name"), supporter.business_name],
                    [t("panel.supporter.field.phone"), supporter.phone],
                    [t("panel.supporter.field.mobile"), supporter.mobile],
                    [
                      t("panel.supporter.field.address"),
                      [
                        supporter.address,
                        supporter.address2,
                        [supporter.postal_code, supporter.city].filter(Boolean).join(" "),
                        supporter.locality,
                        supporter.country,
                      ]
                        .filter(Boolean)
                        .join(", ") || null,
                    ],
                    [t("panel.supporter.field.job"), supporter.job],
                    [
                      t("panel.form_field.sex"),
                      supporter.sex === "FEMALE"
                        ? t("panel.supporter_editor.sex_female")
                        : supporter.sex === "MALE"
                          ? t("panel.supporter_editor.sex_male")
                          : null,
                    ],
                    [t("panel.supporter.field.date_of_birth"), supporter.date_of_birth],
                    [t("panel.supporter.field.place_of_birth"), supporter.place_of_birth],
                    [t("panel.supporter.field.ssn"), supporter.ssn],
                    [t("panel.supporter.field.vat"), supporter.vat],
                    [t("panel.supporter.field.note"), supporter.note],
                    [t("panel.column.tags"), <Tags key="tags" tags={supporter.tags} />],
                    [
                      t("panel.supporter.field.yearly_statement"),
                      supporter.certification_url ? (
                        <a key="k270" href={supporter.certification_url} target="_blank" rel="noopener">
                          {t("panel.supporter.tax_statement")}
                        </a>
                      ) : null,
                    ],
                  ]}
                />
              </Section>
              <Section title={t("panel.supporter.consents")} id="consents">
                <ConsentsForm
                  key={supporter.update_date}
                  supporter={supporter}
                  canWrite={canWrite}
                  onSaved={() => state.reload()}
                />
              </Section>
            </div>
            <SupporterNotes key={supporter.update_date} supporterId={supporter.id} erased={erased} />
            <Section
              title={t("panel.supporter.donations", { count: fmt.number(donations.count) })}
              id="supporter-donations"
              actions={
                <Link to={`${path("donations")}?supporter_id=${supporter.id}`}>{t("panel.dashboard.view_all")}</Link>
              }
            >
              {donations.items.length === 0 ? (
                <Empty>{t("panel.supporter.no_donations")}</Empty>
              ) : (
                <DataTable
                  testId="supporter-donations"
                  caption={t("panel.donations.title")}
                  columns={donationColumns}
                  rows={donations.items}
                />
              )}
            </Section>
            <Section
              title={t("panel.supporter.checkouts", { count: fmt.number(checkouts.count) })}
              id="supporter-checkouts"
              actions={
                <Link to={`${path("checkouts")}?supporter_id=${supporter.id}`}>{t("panel.dashboard.view_all")}</Link>
              }
            >
              {checkouts.items.length === 0 ? (
                <Empty>{t("panel.supporter.no_checkouts")}</Empty>
              ) : (
                <DataTable
                  testId="supporter-checkouts"
                  caption={t("panel.checkouts.title")}
                  columns={checkoutColumns}
                  rows={checkouts.items}
                />
              )}
            </Section>
          </>
        );
      }}
    </Async>
  );
}
