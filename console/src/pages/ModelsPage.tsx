import { api, data, type Schemas } from '../api/client';
import { DataTable, type Column } from '../components/table';
import { ErrorMessage, useLoad } from '../components/ui';
import { formatUsd } from '../format/money';
import { modelUnavailableReason } from '../api/models';

type Model = Schemas['ModelInfo'];

const perMillion = (perToken: number) => formatUsd(perToken * 1e6);

const COLUMNS: Column<Model>[] = [
  {
    key: 'model',
    header: 'Model',
    primary: true,
    cell: (model) => (
      <span className="named">
        {model.display_name}
        <code className="small muted">{model.id}</code>
      </span>
    ),
  },
  { key: 'provider', header: 'Provider', cell: (model) => model.provider },
  {
    key: 'input',
    header: 'Input / 1M tokens',
    numeric: true,
    cell: (model) => perMillion(model.input_cost_per_token_usd),
  },
  {
    key: 'output',
    header: 'Output / 1M tokens',
    numeric: true,
    cell: (model) => perMillion(model.output_cost_per_token_usd),
  },
  { key: 'vision', header: 'Vision', cell: (model) => (model.vision_supported ? 'yes' : 'no') },
  {
    key: 'availability',
    header: 'Availability',
    cell: (model) => {
      const reason = modelUnavailableReason(model);
      return reason ? <span className="error-text">{reason}</span> : 'available';
    },
  },
];

export function ModelsPage() {
  const list = useLoad(() => data(api.GET('/agent/models')), []);
  return (
    <section>
      <h1>Models</h1>
      <ErrorMessage error={list.error} />
      {list.value && (
        <>
          <p>
            Default model: <code>{list.value.default_model_id}</code>
          </p>
          <DataTable
            label="Models"
            rows={list.value.models}
            columns={COLUMNS}
            rowKey={(model) => model.id}
            empty={<p className="muted">No models in the catalogue.</p>}
          />
        </>
      )}
    </section>
  );
}
