import type { ValidationIssue } from "../errors/app-error.js";
import { DEFAULT_LOCALE, type Locale } from "./locales.js";
import { hasMessage, t } from "./messages.js";

/**
 * What is wrong with a field: a stable code, whose words are the `fields` catalog's
 * (src/i18n/catalogs/<locale>/fields.json), and the particulars they name (a length, a country).
 */
export interface FieldProblem {
  code: string;
  values?: Record<string, string | number>;
}

export const fieldProblem = (code: string, values?: Record<string, string | number>): FieldProblem =>
  values ? { code, values } : { code };

/** A problem's words in a language (English by default: the wire's own). */
export const problemText = (problem: FieldProblem, locale: Locale = DEFAULT_LOCALE): string =>
  t(locale, `fields.${problem.code}`, problem.values);

/** A field's issue as errors[] carries it: the English words, the code and its particulars. */
export function fieldIssue(field: string, problem: FieldProblem): ValidationIssue {
  return { field, message: problemText(problem), ...problem };
}

/** Issues reworded in a language: each whose code the catalog knows; the others keep their words. */
export function localizedIssues(issues: ValidationIssue[], locale: Locale): ValidationIssue[] {
  if (locale === DEFAULT_LOCALE) return issues;
  return issues.map((issue) =>
    issue.code && hasMessage(`fields.${issue.code}`)
      ? { ...issue, message: t(locale, `fields.${issue.code}`, issue.values) }
      : issue,
  );
}
