/**
 * The JupyterLab extension entry: registers the `placeviz` widget module (PlacementInspectorModel,
 * PlacementInspectorView) with the ipywidgets registry, and keeps a live inspector's document in
 * its notebook when the kernel stops mid-cell (hosts/rescue.ts). The MIME renderer for
 * application/vnd.placeviz+json is the package's `jupyterlab.mimeExtension` (hosts/mime.ts).
 */
import { IJupyterWidgetRegistry } from '@jupyter-widgets/base';
import { INotebookTracker } from '@jupyterlab/notebook';
import { watchNotebook } from './hosts/rescue';
import {
  inspectorDocument,
  MODULE_NAME,
  MODULE_VERSION,
  PlacementInspectorModel,
  PlacementInspectorView,
} from './hosts/widget';

export { PlacementInspectorModel, PlacementInspectorView, MODULE_NAME, MODULE_VERSION };

/** The part of JupyterFrontEndPlugin a plugin needs (no dependency on @jupyterlab/application). */
interface Plugin<Token, Service> {
  id: string;
  description: string;
  requires: [Token];
  autoStart: boolean;
  activate(app: unknown, service: Service): void;
}

export type WidgetPlugin = Plugin<typeof IJupyterWidgetRegistry, IJupyterWidgetRegistry>;
export type RescuePlugin = Plugin<typeof INotebookTracker, INotebookTracker>;

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

export const rescuePlugin: RescuePlugin = {
  id: 'placeviz:rescue',
  description:
    'Writes the document a live placeviz inspector shows into its cell when the notebook kernel ' +
    'stops mid-cell, so the saved notebook keeps the inspector.',
  requires: [INotebookTracker],
  autoStart: true,
  activate(_app: unknown, tracker: INotebookTracker): void {
    tracker.forEach((panel) => watchNotebook(panel, inspectorDocument));
    tracker.widgetAdded.connect((_, panel) => watchNotebook(panel, inspectorDocument));
  },
};

export default [widgetPlugin, rescuePlugin];
