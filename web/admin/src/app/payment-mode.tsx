import { createContext, type ReactNode, useContext } from "react";
import { Link } from "react-router";
import { useI18n } from "../i18n";
import { useOrg } from "./org-context";
import { useQuery } from "./use-query";

interface PaymentModeValue {
  /** "test" or "live" with Stripe keys, null on the sandbox or while loading. */
  stripeMode: string | null;
  /** The organization's test mode: the sandbox takes its gifts (false while loading). */
  testMode: boolean;
  /** No card processor at all (production without Stripe or test mode): donors cannot give by card. */
  noProcessor: boolean;
  /** Asks again (after keys are saved or removed, or test mode switched), so the banner follows at once. */
  reload: () => void;
}

const PaymentModeContext = createContext<PaymentModeValue>({
  stripeMode: null,
  testMode: false,
  noProcessor: false,
  reload: () => {},
});

const PAYMENT_MODE = `query PaymentMode { paymentSettings { processor mode test_mode } }`;

/** The organization's Stripe mode and test mode for every page of the panel (the test-mode banner). */
export function PaymentModeProvider({ children }: { children: ReactNode }) {
  const state = useQuery<{ paymentSettings: { processor: string; mode: string | null; test_mode: boolean } }>(
    PAYMENT_MODE,
  );
  const settings = state.data?.paymentSettings;
  const stripeMode = settings?.processor === "stripe" ? settings.mode : null;
  const testMode = settings?.test_mode === true;
  const noProcessor = settings?.processor === "none";
  return (
    <PaymentModeContext.Provider value={{ stripeMode, testMode, noProcessor, reload: state.reload }}>
      {children}
    </PaymentModeContext.Provider>
  );
}

export function usePaymentMode(): PaymentModeValue {
  return useContext(PaymentModeContext);
}

/** On every page while nothing donors "give" is real money: the sandbox in test mode, or Stripe test keys. */
export function TestModeBanner() {
  const { stripeMode, testMode, noProcessor } = usePaymentMode();
  const { path } = useOrg();
  const { rich } = useI18n();
  const strong = (chunks: ReactNode) => <strong>{chunks}</strong>;
  const link = (chunks: ReactNode) => <Link to={`${path("settings")}#payments`}>{chunks}</Link>;
  if (noProcessor) {
    return (
      <div className="test-mode-banner" role="status" data-testid="no-processor-banner">
        {rich("panel.banner.no_processor", { strong, link })}
      </div>
    );
  }
  if (testMode) {
    return (
      <div className="test-mode-banner" role="status" data-testid="test-mode-banner">
        {rich("panel.banner.test_mode", { strong, link })}
      </div>
    );
  }
  if (stripeMode !== "test") return null;
  return (
    <div className="test-mode-banner" role="status" data-testid="test-mode-banner">
      {rich("panel.banner.stripe_test_keys", { strong, link })}
    </div>
  );
}
