import { api, data } from '../api/client';
import { ErrorMessage, useLoad } from '../components/ui';
import { modelDisableLabel } from '../labels';

const perMillion = (perToken: number) => `$${(perToken * 1e6).toFixed(2)}`;

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
          <div className="table-wrap">
            <table aria-label="Models">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Input / 1M tokens</th>
                  <th scope="col">Output / 1M tokens</th>
                  <th scope="col">Vision</th>
                  <th scope="col">Availability</th>
                </tr>
              </thead>
              <tbody>
                {list.value.models.map((model) => (
                  <tr key={model.id}>
                    <td>
                      {model.display_name}
                      <br />
                      <code>{model.id}</code>
                    </td>
                    <td>{model.provider}</td>
                    <td>{perMillion(model.input_cost_per_token_usd)}</td>
                    <td>{perMillion(model.output_cost_per_token_usd)}</td>
                    <td>{model.vision_supported ? 'yes' : 'no'}</td>
                    <td>
                      {model.disabled ? (
                        <span className="error-text">
                          {model.disable_reason
                            ? modelDisableLabel(model.disable_reason)
                            : 'Disabled'}
                          {model.disable_detail ? `: ${model.disable_detail}` : ''}
                        </span>
                      ) : (
                        'available'
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
