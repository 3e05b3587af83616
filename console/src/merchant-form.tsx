/**
 * The form of a merchant, to add one or to change one: the fields of the
 * platform, the tax identifier that the country asks for (CUIT in Argentina, RFC
 * in Mexico), and each refusal of the service shown beside the field it names.
 */
import { useState, type FormEvent, type ReactNode } from 'react';
import type { Schemas } from '../../clients/typescript/index';
import { ApiError, client, describeError, unwrap } from './api';
import { ErrorNote } from './ui';

type Merchant = Schemas['Merchant'];
type Country = Schemas['CreateMerchantRequest']['country'];

/** What each country identifies a merchant by, and how the number looks. */
export const TAX_ID: Record<Country, { type: 'CUIT' | 'RFC'; label: string; hint: string }> = {
  ARG: { type: 'CUIT', label: 'CUIT', hint: '11 digits, e.g. 30-71234567-1' },
  MEX: { type: 'RFC', label: 'RFC', hint: '12 letters and digits (a company) or 13 (a person)' },
};

/** Field → message, from a refusal's `errors` (or its code, for a taken merchant_code). */
type FieldErrors = Record<string, string>;

function fieldErrors(error: unknown): FieldErrors {
  if (!(error instanceof ApiError)) return {};
  if (error.problem.code === 'merchant_code_conflict') return { merchant_code: error.problem.detail };
  return Object.fromEntries((error.problem.body?.errors ?? []).map((e) => [e.field, e.message]));
}

/** The body's fields from the form: blank optional text is left out (null when `clear`, to remove it on a change). */
function readForm(form: FormData, country: Country, clear: boolean) {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const optional = (name: string) => text(name) || (clear ? null : undefined);
  const representativeNames = [
    'name',
    'surname',
    'identification.type',
    'identification.number',
    'birth_date',
    'email',
    'phone',
  ];
  const hasRepresentative = representativeNames.some((f) => text(`representative.${f}`));
  const settlementNames = ['transaction_fee', 'settlement', 'cbu_or_cvu'];
  const hasSettlement = settlementNames.some((f) => text(`settlement_condition.${f}`));
  const floor = text('address.floor');
  const apartment = text('address.apartment');
  const taxNumber = text('tax_identification.number');
  const taxCondition = text('tax.type');
  const birthDate = text('representative.birth_date');
  return {
    legal_type: text('legal_type') as Schemas['CreateMerchantRequest']['legal_type'],
    business_name: text('business_name'),
    fantasy_name: text('fantasy_name'),
    merchant_code: optional('merchant_code'),
    email: optional('email'),
    additional_info: optional('additional_info'),
    address: {
      state: text('address.state'),
      city: text('address.city'),
      zip: text('address.zip'),
      street: text('address.street'),
      number: text('address.number'),
      ...(floor ? { floor } : {}),
      ...(apartment ? { apartment } : {}),
    },
    tax_identification: { type: TAX_ID[country].type, number: taxNumber },
    // The platform's v1 tax: the same number, with the tax condition (kept by the service as financial_info's).
    tax: taxCondition ? { id: taxNumber, type: taxCondition } : undefined,
    phone: optional('phone'),
    activity: optional('activity'),
    category: optional('category'),
    settlement_condition: hasSettlement
      ? {
          transaction_fee: text('settlement_condition.transaction_fee'),
          settlement: text('settlement_condition.settlement'),
          cbu_or_cvu: text('settlement_condition.cbu_or_cvu'),
        }
      : clear
        ? null
        : undefined,
    representative: hasRepresentative
      ? {
          type: text('representative.type') as 'PRESIDENT' | 'PROXY' | 'OTHER',
          name: text('representative.name'),
          surname: text('representative.surname'),
          identification: {
            type: text('representative.identification.type'),
            number: text('representative.identification.number'),
          },
          ...(birthDate ? { birth_date: birthDate } : {}),
          email: text('representative.email'),
          phone: text('representative.phone'),
        }
      : clear
        ? null
        : undefined,
  };
}

/** Leaves out what is undefined: the service refuses an explicit undefined no more than an absent field, but keeps the body small. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function MerchantForm(props: {
  customerId: string;
  merchant?: Merchant;
  onSaved: (merchant: Merchant) => void;
  onCancel?: () => void;
}) {
  const { merchant } = props;
  const [country, setCountry] = useState<Country>((merchant?.country as Country | null) ?? 'ARG');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [general, setGeneral] = useState<string>();
  const [busy, setBusy] = useState(false);
  const tax = TAX_ID[country];

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setErrors({});
    setGeneral(undefined);
    try {
      const saved = merchant
        ? await unwrap(
            client.PATCH('/v1/merchants/{id}', {
              params: { path: { id: merchant.id } },
              body: defined(readForm(form, country, true)),
            }),
          )
        : await unwrap(
            client.POST('/v1/merchants', {
              body: defined({
                ...readForm(form, country, false),
                customer_id: props.customerId,
                country,
              }) as Schemas['CreateMerchantRequest'],
            }),
          );
      props.onSaved(saved);
    } catch (error) {
      const byField = fieldErrors(error);
      setErrors(byField);
      if (Object.keys(byField).length === 0) setGeneral(describeError(error));
    } finally {
      setBusy(false);
    }
  };

  const field = (name: string, label: string, value: string | null | undefined, options: FieldOptions = {}) => (
    <Field key={name} name={name} label={label} value={value} error={errors[name]} {...options} />
  );
  const address = merchant?.address;
  const representative = merchant?.representative;
  const settlement = merchant?.settlement_condition;
  return (
    <form
      onSubmit={submit}
      className="grid-form merchant-form"
      noValidate
      aria-label={merchant ? 'Edit merchant' : 'Add merchant'}
    >
      {merchant ? (
        <p className="fixed">
          Country: <strong>{country}</strong> (cannot be changed)
        </p>
      ) : (
        <label>
          <span>Country</span>
          <select name="country" value={country} onChange={(e) => setCountry(e.target.value as Country)}>
            <option value="ARG">Argentina (ARG)</option>
            <option value="MEX">Mexico (MEX)</option>
          </select>
        </label>
      )}
      <label>
        <span>Legal type</span>
        <select name="legal_type" defaultValue={merchant?.legal_type ?? 'LEGAL_ENTITY'}>
          <option value="LEGAL_ENTITY">Company</option>
          <option value="NATURAL_PERSON">Person</option>
        </select>
      </label>
      {field('business_name', 'Business (legal) name', merchant?.business_name, { required: true, maxLength: 200 })}
      {field('fantasy_name', 'Trading name', merchant?.fantasy_name, { required: true, maxLength: 200 })}
      {field('tax_identification.number', tax.label, merchant?.tax_identification?.number, {
        required: true,
        hint: tax.hint,
      })}
      {field('tax.type', 'Tax condition', merchant?.tax?.type, {
        maxLength: 64,
        hint: country === 'ARG' ? 'e.g. RESPONSABLE_INSCRIPTO, MONOTRIBUTO' : 'e.g. REGIMEN_GENERAL',
      })}
      {field('merchant_code', 'Merchant code', merchant?.merchant_code, { maxLength: 64 })}
      {field('email', 'Contact e-mail', merchant?.email, { type: 'email' })}
      {field('phone', 'Merchant phone', merchant?.phone, { type: 'tel', maxLength: 32 })}
      {field('activity', 'Activity', merchant?.activity, { maxLength: 100 })}
      {field('category', 'Category', merchant?.category, { maxLength: 100, hint: 'e.g. a merchant category code' })}
      <fieldset>
        <legend>Settlement (optional)</legend>
      </fieldset>
      {field('settlement_condition.transaction_fee', 'Transaction fee', settlement?.transaction_fee, {
        maxLength: 32,
        hint: 'e.g. 3.5',
      })}
      {field('settlement_condition.settlement', 'Settlement term', settlement?.settlement, {
        maxLength: 32,
        hint: 'e.g. T+1',
      })}
      {field('settlement_condition.cbu_or_cvu', 'CBU or CVU', settlement?.cbu_or_cvu, {
        maxLength: 30,
        hint: '22 digits',
      })}
      <fieldset>
        <legend>Address</legend>
      </fieldset>
      {field('address.street', 'Street', address?.street, { required: true, maxLength: 200 })}
      {field('address.number', 'Number', address?.number, { required: true, maxLength: 16 })}
      {field('address.floor', 'Floor', address?.floor, { maxLength: 16 })}
      {field('address.apartment', 'Apartment', address?.apartment, { maxLength: 16 })}
      {field('address.city', 'City', address?.city, { required: true, maxLength: 100 })}
      {field('address.state', country === 'ARG' ? 'Province' : 'State', address?.state, {
        required: true,
        maxLength: 100,
      })}
      {field('address.zip', 'Postal code', address?.zip, { required: true, maxLength: 16 })}
      <fieldset>
        <legend>Representative (optional)</legend>
      </fieldset>
      <label>
        <span>Role</span>
        <select name="representative.type" defaultValue={representative?.type ?? 'PRESIDENT'}>
          <option value="PRESIDENT">President</option>
          <option value="PROXY">Proxy</option>
          <option value="OTHER">Other</option>
        </select>
      </label>
      {field('representative.name', 'Given name', representative?.name, { maxLength: 100 })}
      {field('representative.surname', 'Surname', representative?.surname, { maxLength: 100 })}
      {field('representative.identification.type', 'Document type', representative?.identification.type, {
        maxLength: 32,
        hint: country === 'ARG' ? 'e.g. DNI' : 'e.g. CURP',
      })}
      {field('representative.identification.number', 'Document number', representative?.identification.number, {
        maxLength: 32,
      })}
      {field('representative.birth_date', 'Date of birth', representative?.birth_date, { type: 'date' })}
      {field('representative.email', 'Representative e-mail', representative?.email, { type: 'email' })}
      {field('representative.phone', 'Phone', representative?.phone, { type: 'tel', maxLength: 32 })}
      {field('additional_info', 'Notes', merchant?.additional_info, { maxLength: 1000, wide: true })}
      {general && <ErrorNote message={general} />}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {merchant ? 'Save changes' : 'Add merchant'}
        </button>
        {props.onCancel && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

interface FieldOptions {
  required?: boolean;
  maxLength?: number;
  type?: string;
  hint?: string;
  wide?: boolean;
}

/** A labelled input with its hint and, when the service refused it, the reason beside it. */
function Field(
  props: FieldOptions & { name: string; label: string; value: string | null | undefined; error?: string },
) {
  const id = `field-${props.name.replaceAll('.', '-')}`;
  const described = [props.hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ');
  let note: ReactNode = null;
  if (props.error)
    note = (
      <span className="field-error" id={`${id}-error`}>
        {props.error}
      </span>
    );
  return (
    <div className={props.wide ? 'field wide' : 'field'}>
      <label htmlFor={id}>
        {props.label}
        {props.required && <span aria-hidden="true"> *</span>}
      </label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        defaultValue={props.value ?? ''}
        required={props.required}
        maxLength={props.maxLength}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={described || undefined}
      />
      {props.hint && (
        <small className="hint" id={`${id}-hint`}>
          {props.hint}
        </small>
      )}
      {note}
    </div>
  );
}
