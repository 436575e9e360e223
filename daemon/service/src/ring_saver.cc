#include "ring_saver.h"

#include <map>
#include <optional>

namespace atraced {

Reply RingSaver::Save(const Client& c, EventKind kind, const std::vector<const HeldRing*>& rings,
                                            const HeldRing::File* report) {
  // Format first: an event directory is made only when some ring holds a record.
  std::vector<HeldRing::File> files;
  for (const HeldRing* ring : rings) {
    std::vector<std::string> problems;
    auto file = ring->Save(&problems);
    for (const auto& p : problems) log_.Warning("ring ", ring->name(), " of pid ", c.peer.pid, ": ", p);
    if (file) files.push_back(std::move(*file));
  }
  if (files.empty() && !report) return std::nullopt;
  if (report) files.insert(files.begin(), *report);
  std::optional<ProcessDirName> process = ParseProcessDirName(c.process_dir);
  if (!process) return Refusal{ATR_EINVAL, "process: malformed process directory " + c.process_dir};
  uint64_t total = 0;
  for (const HeldRing::File& f : files) total += f.bytes.size();
  if (auto refused = admission_.AdmitBytes(c, total)) return refused;
  // Room for all of it first: a stackcore dir with half its rings would mislead.
  if (Status st = store_.MakeRoom(0, total); !st.ok()) return Refusal{Neg(st.err()), st.message(), false, true};
  auto begun = store_.BeginEvent({*process, kind, c.peer.pid, "", Side::kHost, 0, c.peer.uid});
  if (!begun.ok()) return Refusal{Neg(begun.status().err()), begun.status().message()};
  Reply result;
  for (HeldRing::File& f : files) {
    auto out = store_.OpenFile(begun->seq, f.name);
    Status st = out.ok() ? (*out)->Append({reinterpret_cast<const uint8_t*>(f.bytes.data()), f.bytes.size()})
                         : out.status();
    if (!st.ok()) {
      if (!result) result = Refusal{Neg(st.err()), st.message()};  // the first failure; the others still try
      continue;
    }
    store_.AddBytes(begun->seq, f.bytes.size());
    admission_.CountBytes(c, f.bytes.size());
    if (&f != &files.front() || !report) ++counters_.rings_saved;
  }
  store_.EndEvent(begun->seq);
  return result;
}

std::vector<const HeldRing*> RingSaver::Unreleased(const Client& c) {
  std::vector<const HeldRing*> chosen;
  for (auto& [id, held] : c.rings) {
    if (!c.released.count(id)) chosen.push_back(&held.ring);
  }
  return chosen;
}

std::vector<const HeldRing*> RingSaver::AtDeath(const Client& c, std::string* names) {
  // ids ascend: a later one of the same name is newer.
  std::map<std::string, std::pair<uint32_t, const HeldRing*>> by_name;
  for (auto& [id, held] : c.rings) {
    const bool live = !c.released.count(id);
    auto [pos, inserted] = by_name.try_emplace(held.ring.name(), id, &held.ring);
    if (!inserted && (live || c.released.count(pos->second.first))) pos->second = {id, &held.ring};
  }
  std::vector<const HeldRing*> chosen;
  for (auto& [name, entry] : by_name) {
    chosen.push_back(entry.second);
    *names += (names->empty() ? "" : ", ") + name + (c.released.count(entry.first) ? " (destroyed, exitSave)" : "");
  }
  return chosen;
}

}  // namespace atraced
