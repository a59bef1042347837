export interface Campaign {
  id: number;
  title: string;
  slug: string | null;
  code: string | null;
  type: string;
  goal: number | null;
  is_goal_enabled: boolean;
  has_one_off: boolean;
  has_subscription: boolean;
  allow_custom_amount: boolean;
  allow_custom_subscription_amount: boolean;
  allow_cover_fee: boolean;
  default_amount: number | null;
  default_subscription_amount: number | null;
  min_amount: number | null;
  max_amount: number | null;
  min_subscription_amount: number | null;
  max_subscription_amount: number | null;
  asks: number[] | null;
  asks_subscription: number[] | null;
  shown_fields: string[] | null;
  required_fields: string[] | null;
  privacy_note: string | null;
  cost_example_amount: number | null;
  cost_example_label: string | null;
  tags: string[];
  archive_date: string | null;
  create_date: string;
  update_date: string;
}

export interface SupporterSummary {
  id: number;
  first_name: string | null;
  last_name: string | null;
  business_name: string | null;
  email: string | null;
  erase_date?: string | null;
}

export interface Supporter extends SupporterSummary {
  code: string | null;
  phone: string | null;
  mobile: string | null;
  job: string | null;
  sex: string | null;
  date_of_birth: string | null;
  place_of_birth: string | null;
  ssn: string | null;
  vat: string | null;
  address: string | null;
  address2: string | null;
  city: string | null;
  locality: string | null;
  postal_code: string | null;
  country: string | null;
  note: string | null;
  image: string | null;
  privacy: boolean | null;
  email_marketing: boolean | null;
  phone_marketing: boolean | null;
  sms_marketing: boolean | null;
  postal_marketing: boolean | null;
  profilation_marketing: boolean | null;
  certification_url: string | null;
  erase_date: string | null;
  tags: string[];
  create_date: string;
  update_date: string;
}

export interface PaymentMethod {
  id: number;
  label: string;
  processor: string;
}

export interface Payment {
  id: number;
  donation_id: number;
  state: string;
  amount: number;
  /** Refunds the processor confirmed (a partial refund leaves the payment PAID). */
  amount_refunded?: number;
  currency: string;
  payment_date: string | null;
  processor_intent_id: string | null;
  payment_method: PaymentMethod | null;
  create_date: string;
  update_date: string;
}

export interface Donation {
  id: number;
  code: string;
  state: string;
  amount: number;
  covered_fee: number;
  skipped_cycles: number[];
  currency: string;
  frequency: number | null;
  device: string | null;
  note: string | null;
  receipt_url: string | null;
  tags: string[];
  supporter_id: number;
  campaign_id: number;
  completed_date: string | null;
  create_date: string;
  update_date: string;
}

export interface Checkout {
  id: number;
  state: string;
  amount: number | null;
  frequency: number | null;
  cost_example_quantity: number;
  payment_method_processor: string | null;
  payment_method_label: string | null;
  payment_method_id: number | null;
  completed_date: string | null;
  create_date: string;
  update_date: string;
}

export interface Application {
  id: number;
  client_id: string;
  client_type: "confidential" | "public";
  name: string;
  application_url: string;
  callback_urls: string[];
  permissions: string[];
  create_date: string;
}

export interface Installation {
  id: number;
  create_date: string;
  application: Application;
}

export interface Member {
  user_id: number;
  email: string;
  name: string | null;
  role: string;
  create_date: string;
}

export interface ListResult<T> {
  count: number;
  items: T[];
}
