import type { ReactNode } from "react";

export interface FormFieldProps {
  /** The input's id is `${idPrefix}-${name}`; its hint and error are described by it. */
  idPrefix: string;
  name: string;
  label: string;
  hint?: string;
  error?: string;
  /** Spans the form's grid. */
  wide?: boolean;
  children: (props: { id: string; "aria-invalid"?: true; "aria-describedby"?: string }) => ReactNode;
}

/** One labelled input of an editor form, with its hint and the server's error under it. */
export function FormField({ idPrefix, name, label, hint, error, wide, children }: FormFieldProps) {
  const id = `${idPrefix}-${name}`;
  const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div className={["form-field", wide ? "form-field-wide" : "", error ? "has-error" : ""].filter(Boolean).join(" ")}>
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": error ? true : undefined, "aria-describedby": describedBy })}
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={`${id}-error`} data-field-error={name}>
          {error}
        </p>
      )}
    </div>
  );
}
