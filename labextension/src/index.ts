/**
 * The JupyterLab extension entry: registers the `placeviz` widget module (PlacementInspectorModel,
 * PlacementInspectorView) with the ipywidgets registry. The MIME renderer for
 * application/vnd.placeviz+json is the package's `jupyterlab.mimeExtension` (hosts/mime.ts).
 */
import { IJupyterWidgetRegistry } from '@jupyter-widgets/base';
import {
  MODULE_NAME,
  MODULE_VERSION,
  PlacementInspectorModel,
  PlacementInspectorView,
} from './hosts/widget';

export { PlacementInspectorModel, PlacementInspectorView, MODULE_NAME, MODULE_VERSION };

/** The part of JupyterFrontEndPlugin this plugin needs (no dependency on @jupyterlab/application). */
export interface WidgetPlugin {
  id: string;
  description: string;
  requires: [typeof IJupyterWidgetRegistry];
  autoStart: boolean;
  activate(app: unknown, registry: IJupyterWidgetRegistry): void;
}

export const widgetPlugin: WidgetPlugin = {
  id: 'placeviz:widget',
  description: 'The placeviz PlacementInspector widget.',
  requires: [IJupyterWidgetRegistry],
  autoStart: true,
  activate(_app: unknown, registry: IJupyterWidgetRegistry): void {
    registry.registerWidget({
      name: MODULE_NAME,
      version: MODULE_VERSION,
      exports: { PlacementInspectorModel, PlacementInspectorView },
    });
  },
};

export default widgetPlugin;
