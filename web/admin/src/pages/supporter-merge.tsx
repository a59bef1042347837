import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { Link, useNavigate } from "react-router";
import { supporterName, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { Tags } from "../components/badges";
import { type Crumb, Fields, PageHeader } from "../components/page";
import { Empty, InlineError, Loading } from "../components/states";
import { useI18n } from "../i18n";

const PREVIEW = `query SupporterMergePreview($kept: ID!, $merged: ID!) {
  supporterMergePreview(kept_id: $kept, merged_id: $merged) {
    result { id first_name last_name business_name email phone city tags }
    consents { consent kept merged result from }
    differences { field kept merged }
  }
}`;
const MERGE = `mutation MergeSupporters($kept: ID!, $merged: ID!) {
  mergeSupporters(kept_id: $kept, merged_id: $merged) { merged_id supporter { id } }
}`;
const POINTER = `query SupporterMergePointer($id: ID!) { supporterMerge(id: $id) { kept_id merge_date } }`;

export interface MergeCandidate {
  id: number;
  first_name: string | null;
  last_name: string | null;
  business_name: string | null;
  email: string | null;
  create_date: string;
}

interface MergePreview {
  result: {
    id: number;
    first_name: string | null;
    last_name: string | null;
    business_name: string | null;
    email: string | null;
    phone: string | null;
    city: string | null;
    tags: string[] | null;
  };
  consents: {
    consent: string;
    kept: boolean | null;
    merged: boolean | null;
    result: boolean | null;
    from: string | null;
  }[];
  differences: { field: string; kept: string; merged: string }[];
}

const oldestOf = (supporters: MergeCandidate[]) =>
  [...supporters].sort((a, b) => a.create_date.localeCompare(b.create_date) || a.id - b.id)[0];

/** The "Merge…" action of one group of possible duplicates: choose, preview, confirm. */
export function MergeGroup({ supporters }: { supporters: MergeCandidate[] }) {
  const { t, has } = useI18n();
  const { path } = useOrg();
  const gql = useGraphql();
  const navigate = useNavigate();
  const formId = useId();
  const [open, setOpen] = useState(false);
  const [keptId, setKeptId] = useState(() => oldestOf(supporters)?.id ?? 0);
  const others = supporters.filter((supporter) => supporter.id !== keptId);
  const [chosenMerged, setMergedId] = useState<number | null>(null);
  const mergedId =
    chosenMerged !== null && others.some((supporter) => supporter.id === chosenMerged)
      ? chosenMerged
      : (others[0]?.id ?? 0);
  const [preview, setPreview] = useState<MergePreview | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const labelOf = (supporter: MergeCandidate) => `${supporterName(t, supporter)} #${supporter.id}`;
  const byId = (id: number) => supporters.find((supporter) => supporter.id === id);
  const fieldLabel = (field: string) =>
    field === "image"
      ? t("panel.supporter_editor.image")
      : has(`panel.form_field.${field}`)
        ? t(`panel.form_field.${field}`)
        : field;
  const consentValue = (value: boolean | null) =>
    value === null
      ? t("panel.supporter_merge.not_asked")
      : value
        ? t("panel.supporter_merge.yes")
        : t("panel.supporter_merge.no");

  // Each step starts with its heading focused, so a screen reader hears where it is.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `preview` changes the step, whose heading takes focus.
  useEffect(() => {
    if (open) headingRef.current?.focus();
  }, [open, preview]);

  const close = () => {
    setOpen(false);
    setPreview(null);
    setError(null);
  };

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setBusy(false);
    }
  };

  const showPreview = (event: FormEvent) => {
    event.preventDefault();
    return run(async () => {
      const data = await gql<{ supporterMergePreview: MergePreview }>(PREVIEW, { kept: keptId, merged: mergedId });
      setPreview(data.supporterMergePreview);
    });
  };

  const confirm = () =>
    run(async () => {
      await gql(MERGE, { kept: keptId, merged: mergedId });
      navigate(path(`supporters/${keptId}`), {
        state: { flash: t("panel.supporter_merge.merged", { merged: mergedId, kept: keptId }) },
      });
    });

  if (!open) {
    return (
      <div className="form-actions">
        <button type="button" className="button" onClick={() => setOpen(true)} data-testid="merge-open">
          {t("panel.supporter_merge.open")}
        </button>
      </div>
    );
  }

  if (!preview) {
    const merged = byId(mergedId);
    return (
      <form className="editor-narrow" onSubmit={showPreview} data-testid="merge-form">
        <h3 ref={headingRef} tabIndex={-1}>
          {t("panel.supporter_merge.choose_title")}
        </h3>
        <fieldset className="choice-group">
          <legend>{t("panel.supporter_merge.keep_legend")}</legend>
          {supporters.map((supporter) => (
            <label key={supporter.id} className="checkbox">
              <input
                type="radio"
                name={`${formId}-kept`}
                value={supporter.id}
                checked={keptId === supporter.id}
                onChange={() => setKeptId(supporter.id)}
              />
              {labelOf(supporter)}
            </label>
          ))}
        </fieldset>
        {others.length > 1 ? (
          <fieldset className="choice-group">
            <legend>{t("panel.supporter_merge.merge_legend")}</legend>
            {others.map((supporter) => (
              <label key={supporter.id} className="checkbox">
                <input
                  type="radio"
                  name={`${formId}-merged`}
                  value={supporter.id}
                  checked={mergedId === supporter.id}
                  onChange={() => setMergedId(supporter.id)}
                />
                {labelOf(supporter)}
              </label>
            ))}
          </fieldset>
        ) : (
          merged && <p data-testid="merge-other">{t("panel.supporter_merge.merge_other", { name: labelOf(merged) })}</p>
        )}
        <InlineError error={error} />
        <div className="form-actions">
          <button type="submit" className="button button-primary" disabled={busy} data-testid="merge-preview-button">
            {busy ? t("panel.common.working") : t("panel.supporter_merge.preview")}
          </button>
          <button type="button" className="button" onClick={close} disabled={busy}>
            {t("panel.common.cancel")}
          </button>
        </div>
      </form>
    );
  }

  const kept = byId(keptId);
  const merged = byId(mergedId);
  const result = preview.result;
  return (
    <div className="editor" data-testid="merge-preview">
      <h3 ref={headingRef} tabIndex={-1}>
        {t("panel.supporter_merge.preview_title", {
          merged: merged ? labelOf(merged) : `#${mergedId}`,
          kept: kept ? labelOf(kept) : `#${keptId}`,
        })}
      </h3>
      <p className="muted">{t("panel.supporter_merge.preview_intro", { merged: mergedId, kept: keptId })}</p>
      <h4>{t("panel.supporter_merge.result_title")}</h4>
      <div data-testid="merge-result">
        <Fields
          items={[
            [t("panel.supporter_merge.name"), supporterName(t, result)],
            [t("panel.form_field.email"), result.email],
            [t("panel.form_field.phone"), result.phone],
            [t("panel.form_field.city"), result.city],
            [t("panel.column.tags"), <Tags key="tags" tags={result.tags} />],
          ]}
        />
      </div>
      <div className="table-scroll">
        <table className="table table-compact" data-testid="merge-consents">
          <caption className="visually-hidden">{t("panel.supporter_merge.consents_caption")}</caption>
          <thead>
            <tr>
              <th scope="col">{t("panel.supporter_merge.consent")}</th>
              <th scope="col">{t("panel.supporter_merge.kept_column", { id: keptId })}</th>
              <th scope="col">{t("panel.supporter_merge.merged_column", { id: mergedId })}</th>
              <th scope="col">{t("panel.supporter_merge.result_column")}</th>
            </tr>
          </thead>
          <tbody>
            {preview.consents.map((row) => (
              <tr key={row.consent} data-consent={row.consent}>
                <th scope="row">
                  {has(`panel.supporter.consent.${row.consent}`)
                    ? t(`panel.supporter.consent.${row.consent}`)
                    : row.consent}
                </th>
                <td>{consentValue(row.kept)}</td>
                <td>{consentValue(row.merged)}</td>
                <td>
                  <strong>{consentValue(row.result)}</strong>
                  {row.from === "kept" && ` (${t("panel.supporter_merge.from_kept")})`}
                  {row.from === "merged" && ` (${t("panel.supporter_merge.from_merged")})`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h4>{t("panel.supporter_merge.differences_title")}</h4>
      {preview.differences.length === 0 ? (
        <p className="muted" data-testid="merge-no-differences">
          {t("panel.supporter_merge.no_differences")}
        </p>
      ) : (
        <>
          <p className="muted">{t("panel.supporter_merge.differences_intro")}</p>
          <div className="table-scroll">
            <table className="table table-compact" data-testid="merge-differences">
              <caption className="visually-hidden">{t("panel.supporter_merge.differences_title")}</caption>
              <thead>
                <tr>
                  <th scope="col">{t("panel.supporter_merge.field")}</th>
                  <th scope="col">{t("panel.supporter_merge.kept_value")}</th>
                  <th scope="col">{t("panel.supporter_merge.noted_value")}</th>
                </tr>
              </thead>
              <tbody>
                {preview.differences.map((row) => (
                  <tr key={row.field}>
                    <th scope="row">{fieldLabel(row.field)}</th>
                    <td>{row.kept}</td>
                    <td>{row.merged}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <InlineError error={error} />
      <div className="form-actions">
        <button
          type="button"
          className="button button-primary"
          onClick={confirm}
          disabled={busy}
          data-testid="merge-confirm"
        >
          {busy ? t("panel.common.working") : t("panel.supporter_merge.confirm")}
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            setPreview(null);
            setError(null);
          }}
          disabled={busy}
        >
          {t("panel.supporter_merge.back")}
        </button>
        <button type="button" className="button" onClick={close} disabled={busy} data-testid="merge-cancel">
          {t("panel.common.cancel")}
        </button>
      </div>
    </div>
  );
}

/** A supporter id the organization has no row for: where it went if it was merged, else the plain not-found state. */
export function SupporterNotFound({ id, crumbs }: { id: string; crumbs: Crumb[] }) {
  const { org, path } = useOrg();
  const { t, rich } = useI18n();
  const fmt = useFormat();
  const numeric = /^\d+$/.test(id);
  const state = useQuery<{ supporterMerge: { kept_id: number; merge_date: string } | null }>(POINTER, { id }, !numeric);
  if (numeric && state.loading) return <Loading />;
  const pointer = state.data?.supporterMerge;
  if (pointer) {
    return (
      <>
        <PageHeader title={t("panel.supporter_merge.gone_title")} crumbs={crumbs} />
        <div className="card" data-testid="supporter-merged">
          <p>
            {rich("panel.supporter_merge.gone_body", {
              id,
              kept: pointer.kept_id,
              date: fmt.date(pointer.merge_date),
              link: (chunks) => <Link to={path(`supporters/${pointer.kept_id}`)}>{chunks}</Link>,
            })}
          </p>
        </div>
      </>
    );
  }
  return (
    <>
      <PageHeader title={t("panel.supporter.not_found")} crumbs={crumbs} />
      <Empty>{t("panel.supporter.not_found_body", { id, organization: org.name })}</Empty>
    </>
  );
}
