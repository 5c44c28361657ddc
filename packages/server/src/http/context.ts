// What every handler receives besides its validated request.
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { Plan } from '../catalog/model.ts';

export interface RequestContext {
  requestId: string;
  plan: Plan;
  catalog: CatalogService;
}
