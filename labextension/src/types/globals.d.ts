/** The stylesheet text the standalone build inlines (scripts/build-standalone.mjs `define`). */
declare const __PLACEVIZ_CSS__: string;
