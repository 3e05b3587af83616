/** Add a merchant: the form of the platform's fields; saved, it opens the merchant's page. */
import { Link, useLocation } from 'wouter';
import { MerchantForm } from '../merchant-form';

export function NewMerchantPage({ customerId }: { customerId: string }) {
  const [, navigate] = useLocation();
  return (
    <section aria-labelledby="new-merchant-title">
      <div className="page-head">
        <p className="crumbs">
          <Link href="/merchants">Merchants</Link> /
        </p>
        <h1 id="new-merchant-title">Add a merchant</h1>
        <p className="lead">Fields marked * are required. The tax identifier depends on the country.</p>
      </div>
      <MerchantForm
        customerId={customerId}
        onSaved={(merchant) => navigate(`/merchants/${merchant.id}`)}
        onCancel={() => navigate('/merchants')}
      />
    </section>
  );
}
