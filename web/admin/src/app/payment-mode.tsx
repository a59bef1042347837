import { createContext, type ReactNode, useContext } from "react";
import { Link } from "react-router";
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
  if (noProcessor) {
    return (
      <div className="test-mode-banner" role="status" data-testid="no-processor-banner">
        <strong>Online giving by card is not set up.</strong> Donors cannot give by card yet.{" "}
        <Link to={`${path("settings")}#payments`}>Connect Stripe in Settings → Payments</Link>, or enter the IBAN for
        bank transfers there.
      </div>
    );
  }
  if (testMode) {
    return (
      <div className="test-mode-banner" role="status" data-testid="test-mode-banner">
        <strong>Test mode — no real money moves.</strong> The sandbox takes this organization's gifts: they are test
        data, left out of totals, receipts and statements.{" "}
        <Link to={`${path("settings")}#payments`}>Connect Stripe or switch test mode off in Settings → Payments</Link>{" "}
        before taking real donations.
      </div>
    );
  }
  if (stripeMode !== "test") return null;
  return (
    <div className="test-mode-banner" role="status" data-testid="test-mode-banner">
      <strong>Test mode.</strong> This organization's Stripe keys are test keys: donations use Stripe's test cards and
      no real money moves. <Link to={`${path("settings")}#payments`}>Enter live keys in Settings → Payments</Link> when
      you are ready to take real donations.
    </div>
  );
}
