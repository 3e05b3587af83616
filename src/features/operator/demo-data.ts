/**
 * The demo data set: two customers, a few merchants each, a login user per
 * customer, and a realistic catalogue (brands, methods, installment terms 2..12,
 * international variants, one customer's negotiated plans). Fixed ids, so the
 * README's walkthrough works as printed.
 */
import type { ImportDocument } from './import-schema.js';

export const DEMO_LOGINS = [
  { user: 'ops@acme.test', password: 'acme-demo-password' },
  { user: 'ops@globex.test', password: 'globex-demo-password' },
] as const;

const id = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
export const DEMO_CUSTOMERS = { acme: id('c0000000', 1), globex: id('c0000000', 2) };

const merchantNames = {
  acme: ['Acme Store Downtown', 'Acme Online', 'Acme Airport Kiosk', 'Acme Outlet'],
  globex: ['Globex Supermarket', 'Globex Pharmacy', 'Globex Fuel'],
};

export function demoMerchantId(n: number): string {
  return id('d0000000', n);
}

type Plan = NonNullable<ImportDocument['payment_plans']>[number];

function catalogue(): Plan[] {
  const plans: Plan[] = [];
  let n = 0;
  const add = (p: Omit<Plan, 'id'>) => plans.push({ id: id('e0000000', ++n), ...p });
  const round = (x: number) => Math.round(x * 100) / 100;
  const brands = [
    { brand: 'VISA', base: 2.99, intl: true },
    { brand: 'MASTERCARD', base: 2.89, intl: true },
    { brand: 'ELO', base: 3.19, intl: false },
    { brand: 'AMEX', base: 3.49, intl: true },
  ];
  for (const { brand, base, intl } of brands) {
    const domestic = { card_brand: brand, is_international: false };
    add({ ...domestic, payment_method: 'CREDIT', term: 1, commission: base, has_installments: false });
    for (let term = 2; term <= 12; term++) {
      add({
        ...domestic,
        payment_method: 'CREDIT',
        term,
        commission: round(base + 0.45 * (term - 1)),
        has_installments: true,
      });
    }
    if (brand !== 'AMEX')
      add({ ...domestic, payment_method: 'DEBIT', term: 0, commission: round(base / 2), has_installments: false });
    if (brand === 'VISA' || brand === 'MASTERCARD') {
      add({ ...domestic, payment_method: 'PREPAID', term: 0, commission: round(base * 0.6), has_installments: false });
    }
    if (intl)
      add({
        card_brand: brand,
        is_international: true,
        payment_method: 'CREDIT',
        term: 1,
        commission: round(base + 1.5),
        has_installments: false,
      });
  }
  add({
    card_brand: 'PIX',
    is_international: false,
    payment_method: 'QR',
    term: 0,
    commission: 0.99,
    has_installments: false,
  });
  // Acme's negotiated rates: customer-owned plans, invisible to Globex.
  add({
    customer_id: DEMO_CUSTOMERS.acme,
    card_brand: 'VISA',
    is_international: false,
    payment_method: 'CREDIT',
    term: 1,
    commission: 2.49,
    has_installments: false,
  });
  add({
    customer_id: DEMO_CUSTOMERS.acme,
    card_brand: 'MASTERCARD',
    is_international: false,
    payment_method: 'CREDIT',
    term: 1,
    commission: 2.39,
    has_installments: false,
  });
  return plans;
}

export function demoDocument(): ImportDocument {
  const plans = catalogue();
  let m = 0;
  const merchants = Object.entries(merchantNames).flatMap(([customer, names]) =>
    names.map((name) => ({
      id: demoMerchantId(++m),
      customer_id: DEMO_CUSTOMERS[customer as keyof typeof DEMO_CUSTOMERS],
      name,
    })),
  );
  // Every merchant starts with domestic credit (1x) and debit of VISA and MASTERCARD.
  const starter = plans
    .filter(
      (p) => !p.customer_id && ['VISA', 'MASTERCARD'].includes(p.card_brand) && !p.is_international && p.term <= 1,
    )
    .filter((p) => p.payment_method === 'CREDIT' || p.payment_method === 'DEBIT')
    .map((p) => p.id);
  return {
    customers: [
      { id: DEMO_CUSTOMERS.acme, name: 'Acme Payments' },
      { id: DEMO_CUSTOMERS.globex, name: 'Globex Retail' },
    ],
    merchants,
    users: [
      {
        email: DEMO_LOGINS[0].user,
        type: 'CUSTOMER',
        customer_id: DEMO_CUSTOMERS.acme,
        password: DEMO_LOGINS[0].password,
      },
      {
        email: DEMO_LOGINS[1].user,
        type: 'CUSTOMER',
        customer_id: DEMO_CUSTOMERS.globex,
        password: DEMO_LOGINS[1].password,
      },
    ],
    payment_plans: plans,
    assignments: merchants.map((mm) => ({ merchant_id: mm.id, payment_plan_ids: starter })),
  };
}
