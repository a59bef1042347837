import { useEffect } from "react";
import { Link, useParams } from "react-router";
import type { Installation } from "../api/types";
import { frameUrl, needsFreshLoad, originOnThisMachine } from "../app/frame-policy";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { usePageTitle } from "../components/page";
import { Async, Empty } from "../components/states";
import { useI18n } from "../i18n";

const INSTALLATIONS = `query AppFrame { installations { id create_date application { id client_id name application_url callback_urls permissions create_date } } }`;

export function AppFramePage() {
  const { clientId = "" } = useParams();
  const { org, path } = useOrg();
  const { t, rich } = useI18n();
  const state = useQuery<{ installations: Installation[] }>(INSTALLATIONS);
  const installation = state.data?.installations.find((candidate) => candidate.application.client_id === clientId);
  usePageTitle(installation?.application.name ?? t("panel.apps.app"), org.name);

  useEffect(() => {
    if (needsFreshLoad(clientId)) window.location.reload();
  }, [clientId]);

  return (
    <div className="app-frame-page">
      <div className="app-frame-bar">
        <Link to={path("apps")}>{t("panel.app_frame.back")}</Link>
        <h1 className="app-frame-title">{installation?.application.name ?? t("panel.apps.app")}</h1>
      </div>
      <Async state={state} loadingLabel={t("panel.app_frame.loading")}>
        {() => {
          if (!installation) {
            return (
              <Empty action={<Link to={path("apps")}>{t("panel.app_frame.go_to_apps")}</Link>}>
                {t("panel.app_frame.not_installed", { organization: org.name })}
              </Empty>
            );
          }
          const src = frameUrl(installation.application.application_url, org.slug);
          if (!src) return <Empty>{t("panel.app_frame.not_a_web_address")}</Empty>;
          const local = originOnThisMachine(installation.application.application_url);
          return (
            <>
              {local && (
                <p className="app-frame-note" data-testid="app-frame-note">
                  {rich("panel.app_frame.local_note", {
                    origin: <code>{local}</code>,
                    example: <code>npm run example</code>,
                    start: <code>npm start</code>,
                  })}
                </p>
              )}
              <iframe
                key={src}
                className="app-frame"
                src={src}
                title={installation.application.name}
                data-testid="app-iframe"
                sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox allow-downloads allow-modals"
                referrerPolicy="strict-origin-when-cross-origin"
                allow="clipboard-write"
              />
            </>
          );
        }}
      </Async>
    </div>
  );
}
