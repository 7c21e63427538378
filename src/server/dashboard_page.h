// The live dashboard served at GET /: one self-contained HTML page (styles, script and charts
// inline; nothing from the network) that polls GET /v1/stats and only reads.
#pragma once

namespace ds::server {

const char* DashboardHtml();

}  // namespace ds::server
