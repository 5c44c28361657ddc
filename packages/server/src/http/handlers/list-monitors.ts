import { monitorResource } from '../../monitors/monitor.ts';
import { v2Body } from '../envelope.ts';
import type { ApiHandler } from './api-services.ts';

export const listMonitors: ApiHandler<'listMonitors'> = async (_request, { monitors, key }) => ({
  status: 200,
  body: v2Body((await monitors.listMonitors(key)).map(monitorResource)),
});
