import { type FormEvent, useState } from "react";
import { ApiError } from "../api/graphql";
import { useOrg } from "../app/org-context";
import { useGraphql, useQuery } from "../app/use-query";
import { Flash } from "../components/action-button";
import { Section } from "../components/page";
import { Async, InlineError } from "../components/states";
import { useI18n } from "../i18n";

const READ = "query EmbedOrigins { organization { embed_origins } }";
const SAVE = `mutation SaveEmbedOrigins($origins: [String!]!) {
  updateOrganizationEmbedOrigins(origins: $origins) { embed_origins }
}`;

/** The lines of the text area that hold something: each one an origin. */
const linesOf = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/** Settings → Your website: the sites allowed to frame the donation pages (docs/embed.md). */
export function EmbedSection() {
  const { org, canWrite } = useOrg();
  const { t, has } = useI18n();
  const gql = useGraphql();
  const state = useQuery<{ organization: { embed_origins: string[] } }>(READ);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [flash, setFlash] = useState<string | null>(null);

  const onSubmit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const lines = linesOf(String(new FormData(event.currentTarget).get("origins") ?? ""));
    setBusy(true);
    setError(null);
    setProblems([]);
    setFlash(null);
    try {
      await gql(SAVE, { origins: lines });
      setFlash(t("panel.embed_settings.saved"));
      state.reload();
    } catch (caught) {
      if (caught instanceof ApiError && caught.issues.length > 0) {
        setError(new Error(t("panel.embed_settings.nothing_saved")));
        setProblems(
          caught.issues.map((issue) => {
            const problem =
              issue.code && has(`fields.${issue.code}`) ? t(`fields.${issue.code}`, issue.values) : issue.message;
            const index = /^origins\.(\d+)$/.exec(issue.field ?? "")?.[1];
            return index === undefined
              ? problem
              : t("panel.embed_settings.line_problem", { line: Number(index) + 1, problem });
          }),
        );
      } else {
        setError(caught as Error);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section title={t("panel.embed_settings.title")} id="embed">
      <Async state={state}>
        {({ organization }) => (
          <form onSubmit={onSubmit} noValidate data-testid="embed-origins" key={organization.embed_origins.join(" ")}>
            <p className="muted">{t("panel.embed_settings.intro", { organization: org.name })}</p>
            <Flash message={flash} />
            <InlineError error={error} />
            <div className="form-field">
              <label htmlFor="embed-origins-input">{t("panel.embed_settings.label")}</label>
              <textarea
                id="embed-origins-input"
                name="origins"
                rows={4}
                defaultValue={organization.embed_origins.join("\n")}
                placeholder="https://www.example.org"
                spellCheck={false}
                autoComplete="off"
                readOnly={!canWrite}
                aria-invalid={problems.length > 0 ? true : undefined}
                aria-describedby={
                  problems.length > 0 ? "embed-origins-errors embed-origins-hint" : "embed-origins-hint"
                }
              />
              {problems.length > 0 && (
                <ul className="field-error" id="embed-origins-errors" data-field-error="origins">
                  {problems.map((problem) => (
                    <li key={problem}>{problem}</li>
                  ))}
                </ul>
              )}
              <p className="hint" id="embed-origins-hint">
                {t("panel.embed_settings.hint")}
              </p>
            </div>
            {canWrite ? (
              <div className="form-actions">
                <button
                  type="submit"
                  className="button button-primary"
                  disabled={busy}
                  data-testid="save-embed-origins"
                >
                  {busy ? t("panel.common.saving") : t("panel.embed_settings.save")}
                </button>
              </div>
            ) : (
              <p className="muted">{t("panel.settings.read_only")}</p>
            )}
          </form>
        )}
      </Async>
    </Section>
  );
}
