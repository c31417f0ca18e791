// loopcast — the reports of the catalogue's commands (docs/output.md): `prices import --json`,
// `limits infer --json` and `limits infer --logs --json`.
#pragma once

#include "loopcast/limits_inference.hpp"
#include "loopcast/price_lists.hpp"
#include "loopcast/report/document.hpp"

#include <string>

namespace loopcast {

document price_list_document(const price_list& list);
std::string price_list_to_json(const price_list& list, int indent = 2);
document limits_document(const limits_evidence& e);
std::string limits_to_json(const limits_evidence& e, int indent = 2);
/// A plan's caps learnt from agent logs.
document plan_caps_document(const plan_inference& r);
std::string plan_caps_to_json(const plan_inference& r, int indent = 2);

} // namespace loopcast
