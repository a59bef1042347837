import { useId, useState } from "react";
import { useGraphql, useQuery } from "../app/use-query";
import { ActionButton, Flash } from "../components/action-button";
import { ConfirmDialog } from "../components/confirm-dialog";
import { useI18n } from "../i18n";
import type { CollectionName, FilterDef } from "./collections";

/** The server's limit (src/modules/segments/segments.service.ts). */
const MAX_NAME_LENGTH = 80;

export interface SegmentFilter {
  name: string;
  value: string;
}

interface Segment {
  id: number;
  name: string;
  filters: SegmentFilter[];
  can_change: boolean;
}

const LIST = `query Segments($collection: String!) {
  segments(collection: $collection) { id name filters { name value } can_change }
}`;
const CREATE = `mutation CreateSegment($collection: String!, $name: String!, $filters: [SegmentFilterInput!]!) {
  createSegment(collection: $collection, name: $name, filters: $filters) { id }
}`;
const DELETE = `mutation DeleteSegment($id: ID!) { deleteSegment(id: $id) { id } }`;

const keyOf = (filters: readonly SegmentFilter[]) =>
  filters
    .map(({ name, value }) => `${name}=${value}`)
    .sort()
    .join("&");

/**
 * A table's saved segments (docs/admin.md): choosing one puts its filters in the URL, so the table
 * and the CSV link follow them; the current filters are saved under a name; the chosen one (the
 * segment whose filters the URL carries) is deleted by its creator, an owner or an admin.
 */
export function SegmentsControl({
  collection,
  title,
  filters,
  current,
  onChoose,
}: {
  collection: CollectionName;
  title: string;
  filters: FilterDef[];
  /** The table's filters the URL carries, in the table's order. */
  current: SegmentFilter[];
  onChoose: (filters: SegmentFilter[]) => void;
}) {
  const { t } = useI18n();
  const gql = useGraphql();
  const state = useQuery<{ segments: Segment[] }>(LIST, { collection });
  const segments = state.data?.segments ?? [];
  const currentKey = keyOf(current);
  const chosen = current.length > 0 ? segments.find((segment) => keyOf(segment.filters) === currentKey) : undefined;
  const [saving, setSaving] = useState(false);
  const [name, setName] = useState("");
  const [flash, setFlash] = useState<string | null>(null);
  const selectId = useId();
  const nameId = useId();
  const groupId = useId();

  const describe = (filter: SegmentFilter) => {
    const def = filters.find((item) => item.name === filter.name);
    const option = def?.options?.find(([value]) => value === filter.value);
    return `${def ? t(def.label) : filter.name}: ${option ? t(option[1]) : filter.value}`;
  };

  return (
    <section className="segments-bar" aria-labelledby={groupId} data-testid="segments">
      <h2 id={groupId} className="visually-hidden">
        {t("panel.segments.heading", { title })}
      </h2>
      <label htmlFor={selectId}>{t("panel.segments.label")}</label>
      <select
        id={selectId}
        value={chosen ? String(chosen.id) : ""}
        disabled={state.data === undefined}
        onChange={(event) => {
          setFlash(null);
          const segment = segments.find((item) => String(item.id) === event.target.value);
          onChoose(segment ? segment.filters : []);
        }}
        data-testid="segment-select"
      >
        <option value="">{t("panel.segments.none")}</option>
        {segments.map((segment) => (
          <option key={segment.id} value={segment.id}>
            {segment.name}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="button"
        disabled={current.length === 0}
        onClick={() => {
          setName("");
          setFlash(null);
          setSaving(true);
        }}
        data-testid="save-segment"
      >
        {t("panel.segments.save")}
      </button>
      {chosen?.can_change && (
        <ActionButton
          label={t("panel.segments.delete")}
          title={t("panel.segments.delete_title", { name: chosen.name })}
          confirmLabel={t("panel.segments.delete_confirm")}
          danger
          testId="delete-segment"
          run={() => gql(DELETE, { id: String(chosen.id) })}
          onDone={() => {
            setFlash(t("panel.segments.deleted", { name: chosen.name }));
            state.reload();
          }}
        >
          <p>{t("panel.segments.delete_body")}</p>
        </ActionButton>
      )}
      <Flash message={flash} />
      <ConfirmDialog
        open={saving}
        title={t("panel.segments.save_title")}
        confirmLabel={t("panel.segments.save_confirm")}
        onClose={() => setSaving(false)}
        onConfirm={async () => {
          const trimmed = name.trim();
          if (trimmed === "") throw new Error(t("panel.segments.name_required"));
          await gql(CREATE, { collection, name: trimmed, filters: current });
          setFlash(t("panel.segments.saved", { name: trimmed }));
          state.reload();
        }}
      >
        <div className="form-field">
          <label htmlFor={nameId}>{t("panel.segments.name")}</label>
          <input
            id={nameId}
            name="segment-name"
            maxLength={MAX_NAME_LENGTH}
            value={name}
            onChange={(event) => setName(event.target.value)}
            data-testid="segment-name"
          />
        </div>
        <p>{t("panel.segments.keeps")}</p>
        <ul data-testid="segment-filters">
          {current.map((filter) => (
            <li key={filter.name}>{describe(filter)}</li>
          ))}
        </ul>
      </ConfirmDialog>
    </section>
  );
}
