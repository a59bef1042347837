import { Link, useSearchParams } from "react-router";
import { supporterName, useFormat } from "../app/format";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { Pagination } from "../components/data-table";
import { PageHeader, Section, usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";
import { useI18n } from "../i18n";
import { MergeGroup } from "./supporter-merge";

const PAGE_SIZE = 50;
const DUPLICATES = `query SupporterDuplicates($limit: Int, $offset: Int) {
  supporterDuplicates(limit: $limit, offset: $offset) {
    count items { reason supporters { id first_name last_name business_name email postal_code city erase_date create_date } }
  }
}`;

interface DuplicateSupporter {
  id: number;
  first_name: string | null;
  last_name: string | null;
  business_name: string | null;
  email: string | null;
  postal_code: string | null;
  city: string | null;
  erase_date: string | null;
  create_date: string;
}
interface DuplicateGroup {
  reason: "email" | "name_and_postal_code";
  supporters: DuplicateSupporter[];
}

/** Supporters who may be one person (the same email, or the same name and postal code), newest group first. */
export function SupporterDuplicatesPage() {
  const { org, path, canWrite } = useOrg();
  const fmt = useFormat();
  const { t } = useI18n();
  const title = t("panel.supporter_duplicates.title");
  usePageTitle(title, org.name);
  const [params, setParams] = useSearchParams();
  const asked = Number(params.get("offset"));
  const offset = Number.isSafeInteger(asked) && asked > 0 ? asked : 0;
  const state = useQuery<{ supporterDuplicates: { count: number; items: DuplicateGroup[] } }>(DUPLICATES, {
    limit: PAGE_SIZE,
    offset,
  });

  return (
    <>
      <PageHeader title={title} crumbs={[{ label: t("panel.supporters.title"), to: path("supporters") }]}>
        <p className="muted">{t("panel.supporter_duplicates.intro")}</p>
      </PageHeader>
      <Async state={state} loadingLabel={t("panel.supporter_duplicates.loading")}>
        {({ supporterDuplicates: page }) =>
          page.count === 0 ? (
            <div className="card" data-testid="duplicates-empty">
              <Empty>{t("panel.supporter_duplicates.empty")}</Empty>
            </div>
          ) : (
            <>
              <p className="muted" data-testid="duplicates-count">
                {t("panel.supporter_duplicates.count", { count: page.count, formatted: fmt.number(page.count) })}
              </p>
              {page.items.map((group) => {
                const first = group.supporters[0]?.id ?? 0;
                return (
                  <Section
                    key={first}
                    id={`duplicate-group-${first}`}
                    title={t(`panel.supporter_duplicates.reason_${group.reason}`)}
                  >
                    <ul className="duplicate-group" data-testid="duplicate-group">
                      {group.supporters.map((supporter) => (
                        <li key={supporter.id}>
                          <Link to={path(`supporters/${supporter.id}`)}>{supporterName(t, supporter)}</Link>{" "}
                          <span className="muted">
                            #{supporter.id} · {supporter.email ?? t("panel.supporter_duplicates.no_email")}
                            {supporter.postal_code &&
                              ` · ${t("panel.supporter_duplicates.postal_code", { code: supporter.postal_code })}`}
                            {supporter.city && ` · ${supporter.city}`}
                          </span>
                        </li>
                      ))}
                    </ul>
                    {canWrite && (
                      <MergeGroup key={group.supporters.map((s) => s.id).join()} supporters={group.supporters} />
                    )}
                  </Section>
                );
              })}
              {page.count > PAGE_SIZE && (
                <Pagination
                  offset={offset}
                  limit={PAGE_SIZE}
                  count={page.count}
                  format={fmt.number}
                  onPage={(next) => setParams(next ? { offset: String(next) } : {})}
                />
              )}
            </>
          )
        }
      </Async>
    </>
  );
}
