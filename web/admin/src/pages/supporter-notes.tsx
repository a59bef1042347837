import { useState } from "react";
import { useFormat } from "../app/format";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton } from "../components/action-button";
import { Section } from "../components/page";
import { Async, Empty, InlineError } from "../components/states";
import { useI18n } from "../i18n";

/** The server's limit (src/modules/supporters/supporter-notes.service.ts). */
const MAX_NOTE_LENGTH = 5000;

interface SupporterNote {
  id: number;
  author_name: string;
  body: string;
  create_date: string;
  can_delete: boolean;
}

const NOTES = `query SupporterNotes($id: ID!) {
  supporter(id: $id) { id notes { id author_name body create_date can_delete } }
}`;
const ADD = `mutation AddSupporterNote($supporter_id: ID!, $body: String!) {
  addSupporterNote(supporter_id: $supporter_id, body: $body) { id }
}`;
const DELETE = `mutation DeleteSupporterNote($supporter_id: ID!, $note_id: ID!) {
  deleteSupporterNote(supporter_id: $supporter_id, note_id: $note_id) { id }
}`;

/** Dated notes about a supporter, each with its author: any member writes one; its author, an owner or an admin deletes it. */
export function SupporterNotes({ supporterId, erased }: { supporterId: number; erased: boolean }) {
  const { t } = useI18n();
  const fmt = useFormat();
  const gql = useGraphql();
  const state = useQuery<{ supporter: { id: number; notes: SupporterNote[] } | null }>(NOTES, {
    id: String(supporterId),
  });
  const [body, setBody] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  return (
    <Section title={t("panel.supporter_notes.title")} id="supporter-notes">
      {!erased && (
        <form
          className="note-form"
          data-testid="note-form"
          onSubmit={async (event) => {
            event.preventDefault();
            setBusy(true);
            setError(null);
            try {
              await gql(ADD, { supporter_id: String(supporterId), body });
              setBody("");
              state.reload();
            } catch (caught) {
              setError(caught as Error);
            } finally {
              setBusy(false);
            }
          }}
        >
          <label htmlFor="supporter-note-body">{t("panel.supporter_notes.new_label")}</label>
          <textarea
            id="supporter-note-body"
            name="body"
            rows={3}
            maxLength={MAX_NOTE_LENGTH}
            value={body}
            onChange={(event) => setBody(event.target.value)}
          />
          <InlineError error={error} />
          <div className="form-actions">
            <button type="submit" className="button button-primary" disabled={busy || body.trim() === ""}>
              {busy ? t("panel.common.saving") : t("panel.supporter_notes.add")}
            </button>
          </div>
        </form>
      )}
      <Async state={state}>
        {({ supporter }) =>
          !supporter || supporter.notes.length === 0 ? (
            <Empty>{t("panel.supporter_notes.none")}</Empty>
          ) : (
            <ul className="note-list" data-testid="supporter-notes">
              {supporter.notes.map((note) => (
                <li key={note.id} className="note" data-testid="supporter-note">
                  <p className="note-meta muted small">
                    {t("panel.supporter_notes.by", {
                      author: note.author_name,
                      date: fmt.dateTime(note.create_date),
                    })}
                  </p>
                  <p className="note-body">{note.body}</p>
                  {note.can_delete && (
                    <ActionButton
                      label={t("panel.supporter_notes.delete")}
                      title={t("panel.supporter_notes.delete_title")}
                      confirmLabel={t("panel.supporter_notes.delete_confirm")}
                      danger
                      testId="delete-note"
                      run={() => gql(DELETE, { supporter_id: String(supporterId), note_id: String(note.id) })}
                      onDone={() => state.reload()}
                    >
                      <p>{t("panel.supporter_notes.delete_body", { author: note.author_name })}</p>
                    </ActionButton>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Async>
    </Section>
  );
}
