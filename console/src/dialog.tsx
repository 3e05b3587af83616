/** A modal built on <dialog>: focus is trapped and Escape closes it, by the browser. */
import { useEffect, useRef, type FormEvent, type ReactNode } from 'react';

export function Dialog(props: {
  title: string;
  children: ReactNode;
  confirm: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: (form: FormData) => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    props.onConfirm(new FormData(event.currentTarget));
  };
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onClose={props.onClose} onCancel={props.onClose}>
      <form onSubmit={submit} className="stack">
        <h2 id="dialog-title">{props.title}</h2>
        {props.children}
        <div className="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className={props.danger ? 'danger' : 'primary'} disabled={props.busy}>
            {props.confirm}
          </button>
        </div>
      </form>
    </dialog>
  );
}
