import { createContext, type ReactNode, useContext } from "react";
import { Link } from "react-router";
import { useOrg } from "./org-context";
import { useQuery } from "./use-query";

interface PaymentModeValue {
  /** "test" or "live" with Stripe keys, null on the sandbox or while loading. */
  stripeMode: string | null;
  /** Asks again (after keys are saved or removed), so the banner follows at once. */
  reload: () => void;
}

const PaymentModeContext = createContext<PaymentModeValue>({ stripeMode: null, reload: () => {} });

const PAYMENT_MODE = `query PaymentMode { paymentSettings { processor mode } }`;

/** The organization's Stripe mode for every page of the panel (the test-mode banner). */
export function PaymentModeProvider({ children }: { children: ReactNode }) {
  const state = useQuery<{ paymentSettings: { processor: string; mode: string | null } }>(PAYMENT_MODE);
  const settings = state.data?.paymentSettings;
  const stripeMode = settings?.processor === "stripe" ? settings.mode : null;
  return (
    <PaymentModeContext.Provider value={{ stripeMode, reload: state.reload }}>{children}</PaymentModeContext.Provider>
  );
}

export function usePaymentMode(): PaymentModeValue {
  return useContext(PaymentModeContext);
}

/** On every page while the organization's Stripe keys are test keys: nothing donors "give" is real money. */
export function TestModeBanner() {
  const { stripeMode } = usePaymentMode();
  const { path } = useOrg();
  if (stripeMode !== "test") return null;
  return (
    <div className="test-mode-banner" role="status" data-testid="test-mode-banner">
      <strong>Test mode.</strong> This organization's Stripe keys are test keys: donations use Stripe's test cards and
      no real money moves. <Link to={`${path("settings")}#payments`}>Enter live keys in Settings → Payments</Link> when
      you are ready to take real donations.
    </div>
  );
}
