import { useQuery } from "../app/use-query";
import { useT } from "../i18n";

const CAMPAIGN_OPTIONS = `query CampaignOptions { campaigns(limit: 500, order: "title") { items { id title archive_date } } }`;

interface CampaignSelectProps {
  id: string;
  name: string;
  defaultValue?: string;
  required?: boolean;
  allLabel?: string;
  onChange?: () => void;
}

/** A select of the organization's campaigns (falls back to a number field if they cannot be loaded). */
export function CampaignSelect({ id, name, defaultValue, required, allLabel, onChange }: CampaignSelectProps) {
  const t = useT();
  const state = useQuery<{ campaigns: { items: { id: number; title: string; archive_date: string | null }[] } }>(
    CAMPAIGN_OPTIONS,
  );
  if (state.error) {
    return (
      <input
        id={id}
        name={name}
        type="number"
        min={1}
        inputMode="numeric"
        defaultValue={defaultValue}
        required={required}
      />
    );
  }
  const items = state.data?.campaigns.items ?? [];
  const known = !defaultValue || items.some((item) => String(item.id) === defaultValue);
  return (
    <select
      id={id}
      name={name}
      defaultValue={defaultValue ?? ""}
      key={`${items.length}:${defaultValue ?? ""}`}
      required={required}
      onChange={onChange}
      aria-busy={state.loading || undefined}
    >
      <option value="">
        {required ? t("panel.campaign_select.choose") : (allLabel ?? t("panel.campaign_select.all"))}
      </option>
      {!known && defaultValue && (
        <option value={defaultValue}>{t("panel.campaign_select.numbered", { id: defaultValue })}</option>
      )}
      {items.map((item) => (
        <option key={item.id} value={item.id}>
          {item.archive_date ? t("panel.campaign_select.archived", { title: item.title }) : item.title}
        </option>
      ))}
    </select>
  );
}
