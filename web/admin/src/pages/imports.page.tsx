import { useEffect, useState } from "react";
import { Link } from "react-router";
import { ApiError, graphql } from "../api/graphql";
import { type ImportPreview, type ImportRun, previewImport, startImport } from "../api/imports";
import { useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { DataTable, DateTimeCell } from "../components/data-table";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty, Loading } from "../components/states";
import { useI18n } from "../i18n";

/** The kinds of file the panel imports (the server's importers); each has its words under panel.imports.kind. */
const KINDS = ["supporters", "donations"] as const;
const PRESETS = ["givebutter", "donorbox"] as const;
const IGNORE = "ignore";
/** How often a queued or running import is asked for its progress. */
const POLL_MS = 1000;

const RUN_FIELDS = `id kind file_name preset dry_run state rows_total rows_done created updated unchanged refused
  results_url error create_date refused_rows { line external_id problems { column field message } }`;
const IMPORT = `query Import($id: ID!) { import(id: $id) { ${RUN_FIELDS} } }`;
const IMPORTS = `query Imports { imports(first: 20) { ${RUN_FIELDS} } }`;

const TONES: Record<ImportRun["state"], string> = { queued: "info", running: "warn", done: "good", failed: "bad" };

function ImportState({ state }: { state: ImportRun["state"] }) {
  const { t } = useI18n();
  return <span className={`badge badge-${TONES[state]}`}>{t(`panel.imports.state_value.${state}`)}</span>;
}

const finished = (run: ImportRun | null) => run !== null && (run.state === "done" || run.state === "failed");

/** Asks for the run's state every second until it is over. */
function usePolledRun(org: string, initial: ImportRun | null, onOver: () => void): [ImportRun | null, Error | null] {
  const [run, setRun] = useState(initial);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    setRun(initial);
    setError(null);
  }, [initial]);
  const id = run?.id;
  const over = finished(run);
  // biome-ignore lint/correctness/useExhaustiveDependencies: onOver is called once, when the run is over.
  useEffect(() => {
    if (id === undefined) return;
    if (over) {
      onOver();
      return;
    }
    let stopped = false;
    const timer = setInterval(() => {
      graphql<{ import: ImportRun }>(org, IMPORT, { id }).then(
        (data) => {
          if (!stopped) setRun(data.import);
        },
        (failure: Error) => {
          if (!stopped) setError(failure);
        },
      );
    }, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [org, id, over]);
  return [run, error];
}

function RunProgress({ run, testId }: { run: ImportRun; testId: string }) {
  const { t } = useI18n();
  const fmt = useFormat();
  const percent = run.rows_total === 0 ? 0 : Math.round((run.rows_done / run.rows_total) * 100);
  return (
    <div className="import-progress" data-testid={testId}>
      <div
        className="import-progress-track"
        role="progressbar"
        aria-label={t(run.dry_run ? "panel.imports.progress_dry_run" : "panel.imports.progress", {
          file: run.file_name,
        })}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
        aria-valuetext={t("panel.imports.progress_value", {
          done: fmt.number(run.rows_done),
          total: fmt.number(run.rows_total),
        })}
      >
        <div className="import-progress-bar" style={{ width: `${percent}%` }} />
      </div>
      <p className="muted small">
        <ImportState state={run.state} />{" "}
        {t("panel.imports.progress_value", { done: fmt.number(run.rows_done), total: fmt.number(run.rows_total) })}
      </p>
    </div>
  );
}

/** What a finished run says: its counts, the refused rows with their line, column and reason, its results. */
function RunOutcome({ run, testId }: { run: ImportRun; testId: string }) {
  const { t } = useI18n();
  const fmt = useFormat();
  if (run.state === "failed") {
    return (
      <p className="inline-error" role="alert" data-testid={`${testId}-failed`}>
        {t("panel.imports.failed", { error: run.error ?? "" })}
      </p>
    );
  }
  const counts = [
    ["created", run.dry_run ? "panel.imports.to_create" : "panel.imports.created", run.created],
    ["updated", run.dry_run ? "panel.imports.to_update" : "panel.imports.updated", run.updated],
    ["unchanged", "panel.imports.unchanged", run.unchanged],
    ["refused", "panel.imports.refused", run.refused],
  ] as const;
  const problems = run.refused_rows.flatMap((row) =>
    row.problems.map((problem, index) => ({ id: `${row.line}-${index}`, line: row.line, ...problem })),
  );
  return (
    <div className="import-outcome" data-testid={testId}>
      <p className="flash" role="status">
        {run.dry_run
          ? t("panel.imports.dry_run_done", { count: run.rows_total })
          : t("panel.imports.import_done", { count: run.rows_total })}
      </p>
      <div className="stats">
        {counts.map(([key, label, value]) => (
          <div className="stat card" key={key} data-testid={`${testId}-${key}`}>
            <p className="stat-label">{t(label)}</p>
            <p className="stat-value">{fmt.number(value)}</p>
          </div>
        ))}
      </div>
      {problems.length > 0 && (
        <>
          <h3>{t("panel.imports.refused_rows", { count: run.refused })}</h3>
          <DataTable
            testId={`${testId}-refused`}
            caption={t("panel.imports.refused_caption", { file: run.file_name })}
            rows={problems}
            columns={[
              { key: "line", label: t("panel.imports.line"), numeric: true, render: (row) => row.line },
              { key: "column", label: t("panel.imports.column"), wrap: true, render: (row) => row.column },
              { key: "reason", label: t("panel.imports.reason"), wrap: true, render: (row) => row.message },
            ]}
          />
          {run.refused > run.refused_rows.length && (
            <p className="muted small">
              {t("panel.imports.refused_more", { shown: run.refused_rows.length, count: run.refused })}
            </p>
          )}
        </>
      )}
      {run.results_url && (
        <p>
          <a className="button" href={run.results_url} download data-testid={`${testId}-download`}>
            {t("panel.imports.download")}
          </a>
        </p>
      )}
    </div>
  );
}

/** Imports: a file's columns mapped to fields over its first rows, a dry run, then the import, and the past ones. */
export function ImportsPage() {
  const { org, canWrite, path } = useOrg();
  const { t, has, errorMessage } = useI18n();
  const fmt = useFormat();
  const title = t("panel.imports.title");
  usePageTitle(title, org.name);

  const [kind, setKind] = useState<string>(KINDS[0]);
  const [preset, setPreset] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<ImportPreview | null>(null);
  const [reading, setReading] = useState(false);
  const [fields, setFields] = useState<string[]>([]);
  const [problem, setProblem] = useState<Error | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const [checkStarted, setCheckStarted] = useState<ImportRun | null>(null);
  const [importStarted, setImportStarted] = useState<ImportRun | null>(null);
  const history = useQuery<{ imports: ImportRun[] }>(IMPORTS, {}, !canWrite);
  const [check, checkError] = usePolledRun(org.slug, checkStarted, history.reload);
  const [run, runError] = usePolledRun(org.slug, importStarted, history.reload);

  // A new file, kind or preset: its columns read again, the mapping starts from the preset's.
  useEffect(() => {
    setCheckStarted(null);
    setImportStarted(null);
    setProblem(null);
    if (!file) {
      setPreview(null);
      return;
    }
    let current = true;
    setReading(true);
    previewImport(org.slug, file, { kind, preset }).then(
      (read) => {
        if (!current) return;
        setPreview(read);
        setFields(read.columns.map((column) => column.field ?? IGNORE));
        setReading(false);
      },
      (failure: Error) => {
        if (!current) return;
        setPreview(null);
        setProblem(failure);
        setReading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [org.slug, file, kind, preset]);

  const fieldLabel = (field: string) =>
    has(`panel.imports.field.${field}`) ? `${t(`panel.imports.field.${field}`)} (${field})` : field;

  /** A field fills one column: choosing it for this one leaves the column that had it ignored. */
  const choose = (index: number, field: string) => {
    setFields((previous) =>
      previous.map((current, at) => (at === index ? field : field !== IGNORE && current === field ? IGNORE : current)),
    );
    setCheckStarted(null);
    setImportStarted(null);
  };

  const start = async (dryRun: boolean) => {
    if (!file || !preview) return;
    setProblem(null);
    setSubmitting(true);
    try {
      const mapping = Object.fromEntries(
        preview.columns.map((column, index) => [column.name, fields[index] ?? IGNORE]),
      );
      const started = await startImport(org.slug, file, { kind, preset, mapping, dryRun });
      if (dryRun) {
        setCheckStarted(started);
        setImportStarted(null);
      } else setImportStarted(started);
    } catch (failure) {
      setProblem(failure as Error);
    } finally {
      setSubmitting(false);
    }
  };

  if (!canWrite) {
    return (
      <>
        <PageHeader title={title} crumbs={[{ label: t("panel.supporters.title"), to: path("supporters") }]} />
        <p className="notice" data-testid="imports-read-only">
          {t("panel.imports.read_only", { role: t(`panel.state.${org.role}`) })}
        </p>
      </>
    );
  }

  const checked = check?.state === "done" ? check : null;
  const issues = problem instanceof ApiError ? problem.issues.map((issue) => issue.message) : [];
  return (
    <>
      <PageHeader title={title} crumbs={[{ label: t("panel.supporters.title"), to: path("supporters") }]}>
        <p className="muted">{t("panel.imports.intro")}</p>
      </PageHeader>
      <Section id="import-file" title={t("panel.imports.file_title")}>
        <div className="form-grid" data-testid="import-form">
          <div className="form-field">
            <label htmlFor="import-kind">{t("panel.imports.kind_label")}</label>
            <select id="import-kind" value={kind} onChange={(event) => setKind(event.target.value)}>
              {KINDS.map((each) => (
                <option key={each} value={each}>
                  {t(`panel.imports.kind.${each}`)}
                </option>
              ))}
            </select>
          </div>
          <div className="form-field">
            <label htmlFor="import-preset">{t("panel.imports.preset_label")}</label>
            <select id="import-preset" value={preset} onChange={(event) => setPreset(event.target.value)}>
              <option value="">{t("panel.imports.preset_none")}</option>
              {PRESETS.map((each) => (
                <option key={each} value={each}>
                  {t(`panel.imports.preset.${each}`)}
                </option>
              ))}
            </select>
          </div>
          <div className="form-field form-field-wide">
            <label htmlFor="import-file-input">{t("panel.imports.file_label")}</label>
            <input
              id="import-file-input"
              type="file"
              accept=".csv,.tsv,.txt,text/csv"
              aria-describedby="import-file-input-hint"
              onChange={(event) => setFile(event.target.files?.[0] ?? null)}
            />
            <p className="hint" id="import-file-input-hint">
              {t("panel.imports.file_hint")}
            </p>
          </div>
        </div>
        {reading && <Loading label={t("panel.imports.reading")} />}
        {problem && (
          <div className="inline-error" role="alert" data-testid="import-problem">
            <p>{errorMessage(problem)}</p>
            {issues.length > 0 && (
              <ul>
                {issues.map((issue) => (
                  <li key={issue}>{issue}</li>
                ))}
              </ul>
            )}
          </div>
        )}
      </Section>

      {preview && !reading && (
        <Section id="import-mapping" title={t("panel.imports.mapping_title")}>
          <p className="muted">{t("panel.imports.mapping_intro")}</p>
          {preview.problems.length > 0 && (
            <ul className="warning" data-testid="import-mapping-problems">
              {preview.problems.map((each) => (
                <li key={each}>{each}</li>
              ))}
            </ul>
          )}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard. */}
          <section className="table-scroll" tabIndex={0} aria-label={t("panel.imports.mapping_title")}>
            <table className="table table-compact" data-testid="import-mapping">
              <caption className="visually-hidden">
                {t("panel.imports.mapping_caption", { file: preview.file_name })}
              </caption>
              <thead>
                <tr>
                  <th scope="col">{t("panel.imports.column")}</th>
                  <th scope="col">{t("panel.imports.field_label")}</th>
                  {preview.rows.map((_, index) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: the preview's rows never move.
                    <th scope="col" key={index}>
                      {t("panel.imports.line_number", { line: index + 2 })}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {preview.columns.map((column, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a file's columns never move.
                  <tr key={index} data-column={column.name}>
                    <th scope="row" className="cell-wrap">
                      {column.name}
                    </th>
                    <td>
                      <select
                        className="mapping-field"
                        aria-label={t("panel.imports.field_for", { column: column.name })}
                        value={fields[index] ?? IGNORE}
                        onChange={(event) => choose(index, event.target.value)}
                      >
                        <option value={IGNORE}>{t("panel.imports.ignore")}</option>
                        {preview.fields.map((field) => (
                          <option key={field} value={field}>
                            {fieldLabel(field)}
                          </option>
                        ))}
                      </select>
                    </td>
                    {preview.rows.map((cells, line) => (
                      // biome-ignore lint/suspicious/noArrayIndexKey: the preview's rows never move.
                      <td key={line} className="cell-wrap">
                        {cells[index] || <span className="muted">—</span>}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <div className="form-actions">
            <button
              type="button"
              className={checked ? "button" : "button button-primary"}
              disabled={submitting || (check !== null && !finished(check))}
              onClick={() => void start(true)}
              data-testid="import-check"
            >
              {t("panel.imports.check")}
            </button>
            <span className="muted small">{t("panel.imports.check_hint")}</span>
          </div>
          {check && <RunProgress run={check} testId="import-check-progress" />}
          {checkError && <p className="inline-error">{errorMessage(checkError)}</p>}
          {check && finished(check) && <RunOutcome run={check} testId="import-check-outcome" />}
          {checked && (
            <div className="form-actions">
              <button
                type="button"
                className="button button-primary"
                disabled={submitting || run !== null}
                onClick={() => void start(false)}
                data-testid="import-run"
              >
                {t("panel.imports.run", { count: checked.rows_total })}
              </button>
            </div>
          )}
          {run && <RunProgress run={run} testId="import-run-progress" />}
          {runError && <p className="inline-error">{errorMessage(runError)}</p>}
          {run && finished(run) && <RunOutcome run={run} testId="import-run-outcome" />}
          {run && finished(run) && (
            <p>
              <Link to={path("supporters")}>{t("panel.imports.see_supporters")}</Link>
            </p>
          )}
        </Section>
      )}

      <Section id="import-history" title={t("panel.imports.history_title")}>
        <Async state={history} loadingLabel={t("panel.imports.history_loading")}>
          {({ imports }) =>
            imports.length === 0 ? (
              <Empty>{t("panel.imports.history_empty")}</Empty>
            ) : (
              <DataTable
                testId="table-imports"
                caption={t("panel.imports.history_title")}
                rows={imports}
                columns={[
                  {
                    key: "date",
                    label: t("panel.imports.date"),
                    render: (row) => <DateTimeCell iso={row.create_date} fmt={fmt} />,
                  },
                  { key: "file", label: t("panel.imports.file"), wrap: true, render: (row) => row.file_name },
                  {
                    key: "kind",
                    label: t("panel.imports.what"),
                    render: (row) =>
                      `${has(`panel.imports.kind.${row.kind}`) ? t(`panel.imports.kind.${row.kind}`) : row.kind} · ${t(
                        row.dry_run ? "panel.imports.dry_run" : "panel.imports.import",
                      )}`,
                  },
                  { key: "state", label: t("panel.imports.state"), render: (row) => <ImportState state={row.state} /> },
                  {
                    key: "counts",
                    label: t("panel.imports.counts"),
                    wrap: true,
                    render: (row) =>
                      t("panel.imports.counts_value", {
                        created: fmt.number(row.created),
                        updated: fmt.number(row.updated),
                        unchanged: fmt.number(row.unchanged),
                        refused: fmt.number(row.refused),
                      }),
                  },
                  {
                    key: "results",
                    label: t("panel.imports.results"),
                    render: (row) =>
                      row.results_url ? (
                        <a
                          href={row.results_url}
                          download
                          aria-label={t("panel.imports.download_of", { file: row.file_name, id: row.id })}
                        >
                          {t("panel.imports.csv")}
                        </a>
                      ) : (
                        "—"
                      ),
                  },
                ]}
              />
            )
          }
        </Async>
      </Section>
    </>
  );
}
