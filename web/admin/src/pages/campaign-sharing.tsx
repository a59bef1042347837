import { Link } from "react-router";
import { useOrg } from "../app/org-context";
import { useQuery } from "../app/use-query";
import { CopyButton } from "../components/copy-button";
import { Section } from "../components/page";
import { Async } from "../components/states";
import { useI18n } from "../i18n";

const QUERY = "query CampaignSharing($id: ID!) { campaignSharing(id: $id) { url qr_svg embed_snippet } }";

interface Sharing {
  url: string;
  qr_svg: string;
  embed_snippet: string;
}

const svgDataUrl = (svg: string) => `data:image/svg+xml;base64,${btoa(svg)}`;

/** The QR code drawn at 1024 px on a canvas and saved as PNG (print shops ask for one). */
async function downloadPng(svg: string, name: string) {
  const image = new Image();
  image.src = svgDataUrl(svg);
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = 1024;
  canvas.height = 1024;
  const context = canvas.getContext("2d");
  if (!context) return;
  context.imageSmoothingEnabled = false;
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  const link = document.createElement("a");
  link.href = canvas.toDataURL("image/png");
  link.download = name;
  link.click();
}

/** A campaign's donation page link, its QR code and the embed snippet (docs/campaigns.md, "Sharing"). */
export function CampaignSharingSection({ campaignId, slug }: { campaignId: number; slug: string | null }) {
  const { path } = useOrg();
  const { t, rich } = useI18n();
  const state = useQuery<{ campaignSharing: Sharing | null }>(QUERY, { id: String(campaignId) }, !slug);
  return (
    <Section title={t("panel.campaign_sharing.title")} id="sharing">
      {!slug ? (
        <p className="muted">{t("panel.campaign_sharing.no_slug")}</p>
      ) : (
        <Async state={state}>
          {({ campaignSharing: sharing }) =>
            sharing && (
              <div className="editor" data-testid="campaign-sharing">
                <p className="muted">{t("panel.campaign_sharing.intro")}</p>
                <div className="form-field">
                  <h3>{t("panel.campaign_sharing.link")}</h3>
                  <div className="inline-actions">
                    <a href={sharing.url} target="_blank" rel="noopener" className="break" data-testid="sharing-url">
                      {sharing.url}
                    </a>
                    <CopyButton value={sharing.url} label={t("panel.campaign_sharing.copy_link")} />
                  </div>
                </div>
                <div className="form-field">
                  <h3>{t("panel.campaign_sharing.qr")}</h3>
                  <div className="inline-actions">
                    <img
                      src={svgDataUrl(sharing.qr_svg)}
                      alt={t("panel.campaign_sharing.qr_alt", { url: sharing.url })}
                      width={160}
                      height={160}
                      data-testid="sharing-qr"
                    />
                    <a className="button button-small" href={svgDataUrl(sharing.qr_svg)} download={`qr-${slug}.svg`}>
                      {t("panel.campaign_sharing.download_svg")}
                    </a>
                    <button
                      type="button"
                      className="button button-small"
                      onClick={() => downloadPng(sharing.qr_svg, `qr-${slug}.png`)}
                    >
                      {t("panel.campaign_sharing.download_png")}
                    </button>
                  </div>
                </div>
                <div className="form-field">
                  <h3>
                    <label htmlFor="sharing-snippet">{t("panel.campaign_sharing.snippet")}</label>
                  </h3>
                  <textarea
                    id="sharing-snippet"
                    readOnly
                    rows={3}
                    value={sharing.embed_snippet}
                    spellCheck={false}
                    aria-describedby="sharing-snippet-hint"
                  />
                  <p className="hint" id="sharing-snippet-hint">
                    {rich("panel.campaign_sharing.snippet_hint", {
                      link: (chunks) => <Link to={`${path("settings")}#embed`}>{chunks}</Link>,
                    })}
                  </p>
                  <CopyButton value={sharing.embed_snippet} label={t("panel.campaign_sharing.copy_snippet")} />
                </div>
              </div>
            )
          }
        </Async>
      )}
    </Section>
  );
}
