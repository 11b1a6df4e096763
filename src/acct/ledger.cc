#include "acct/ledger.h"

#include <sqlite3.h>

#include <cmath>
#include <filesystem>

#include "nlohmann/json.hpp"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS usage(
  bucket REAL NOT NULL, namespace TEXT NOT NULL, pod TEXT NOT NULL, container TEXT NOT NULL,
  gpu_uuid TEXT NOT NULL, mig_instance TEXT NOT NULL, model TEXT NOT NULL,
  sm_seconds REAL NOT NULL, memory_byte_seconds REAL NOT NULL,
  max_memory_bytes INTEGER NOT NULL, cost_nano INTEGER NOT NULL,
  PRIMARY KEY(bucket, namespace, pod, container, gpu_uuid, mig_instance));
CREATE TABLE IF NOT EXISTS devices(
  bucket REAL NOT NULL, gpu_uuid TEXT NOT NULL, model TEXT NOT NULL,
  busy_seconds REAL NOT NULL, unattributed_sm_seconds REAL NOT NULL,
  idle_cost_nano INTEGER NOT NULL, cost_nano INTEGER NOT NULL,
  PRIMARY KEY(bucket, gpu_uuid));
CREATE TABLE IF NOT EXISTS pod_labels(
  namespace TEXT NOT NULL, pod TEXT NOT NULL, labels TEXT NOT NULL,
  PRIMARY KEY(namespace, pod));
INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '1');
)sql";

// Binds in order: text for strings, real for doubles, integer for int64.
void Bind(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void Bind(sqlite3_stmt* s, int i, double v) { sqlite3_bind_double(s, i, v); }
void Bind(sqlite3_stmt* s, int i, int64_t v) { sqlite3_bind_int64(s, i, v); }

template <class... Args>
void BindAll(sqlite3_stmt* s, const Args&... args) {
  sqlite3_reset(s);
  int i = 0;
  (Bind(s, ++i, args), ...);
}

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t == nullptr ? "" : reinterpret_cast<const char*>(t);
}

// Finalizes a statement when it goes out of scope.
struct Statement {
  sqlite3_stmt* s = nullptr;
  ~Statement() { sqlite3_finalize(s); }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Ledger>> Ledger::Open(const std::string& path, Access access,
                                                     double bucket_seconds) {
  const bool read_only = access == Access::kReadOnly;
  if (read_only && !std::filesystem::exists(path)) {
    return absl::NotFoundError(util::Cat(
        "ledger ", path, " does not exist; give the file the agent writes with --ledger"));
  }
  std::unique_ptr<Ledger> l(new Ledger());
  l->path_ = path;
  l->bucket_ = bucket_seconds > 0 ? bucket_seconds : 60;
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &l->db_, flags, nullptr) != SQLITE_OK) {
    return l->Error("cannot open it");
  }
  sqlite3_busy_timeout(l->db_, 5000);
  if (!read_only) {
    if (absl::Status s = l->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !s.ok()) {
      return s;
    }
    if (absl::Status s = l->Exec(kSchema); !s.ok()) return s;
  }
  Statement version;
  if (sqlite3_prepare_v2(l->db_, "SELECT value FROM meta WHERE key='schema_version'", -1,
                         &version.s, nullptr) != SQLITE_OK) {
    return absl::InvalidArgumentError(
        l->Error("is not a gpuplane ledger (no meta table)").message());
  }
  if (sqlite3_step(version.s) != SQLITE_ROW || Text(version.s, 0) != "1") {
    return absl::FailedPreconditionError(util::Cat(
        "ledger ", path, ": schema version is not 1; this gpuplane reads version 1 ledgers"));
  }
  if (read_only) return l;
  for (auto [stmt, sql] : {
           std::pair{&l->upsert_usage_,
                     "INSERT INTO usage VALUES(?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO UPDATE SET "
                     "model=excluded.model, sm_seconds=sm_seconds+excluded.sm_seconds, "
                     "memory_byte_seconds=memory_byte_seconds+excluded.memory_byte_seconds, "
                     "max_memory_bytes=MAX(max_memory_bytes, excluded.max_memory_bytes), "
                     "cost_nano=cost_nano+excluded.cost_nano"},
           std::pair{&l->upsert_device_,
                     "INSERT INTO devices VALUES(?,?,?,?,?,?,?) ON CONFLICT DO UPDATE SET "
                     "model=excluded.model, busy_seconds=busy_seconds+excluded.busy_seconds, "
                     "unattributed_sm_seconds=unattributed_sm_seconds+"
                     "excluded.unattributed_sm_seconds, "
                     "idle_cost_nano=idle_cost_nano+excluded.idle_cost_nano, "
                     "cost_nano=cost_nano+excluded.cost_nano"},
           std::pair{&l->set_meta_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)"},
       }) {
    absl::StatusOr<sqlite3_stmt*> s = l->Prepare(sql);
    if (!s.ok()) return s.status();
    *stmt = *s;
  }
  return l;
}

Ledger::~Ledger() {
  sqlite3_finalize(upsert_usage_);
  sqlite3_finalize(upsert_device_);
  sqlite3_finalize(set_meta_);
  sqlite3_close(db_);
}

absl::Status Ledger::Error(const char* what) const {
  return absl::InternalError(util::Cat("ledger ", path_, ": ", what, ": ",
                                       db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory"));
}

absl::Status Ledger::Exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string m = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    return absl::InternalError(util::Cat("ledger ", path_, ": ", m));
  }
  return absl::OkStatus();
}

absl::StatusOr<sqlite3_stmt*> Ledger::Prepare(const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) return Error("bad statement");
  return s;
}

absl::Status Ledger::Append(const Attribution& w, double t_start, double t_end) {
  const double bucket = std::floor(t_start / bucket_) * bucket_;
  std::map<std::string, std::string> model_of;
  for (const DeviceUsage& d : w.devices) model_of[d.gpu_uuid] = d.model;
  if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  auto step = [&](sqlite3_stmt* s) {
    return sqlite3_step(s) == SQLITE_DONE ? absl::OkStatus() : Error("write failed");
  };
  absl::Status status;
  for (const PodUsage& p : w.pods) {
    if (!status.ok()) break;
    BindAll(upsert_usage_, bucket, p.who.namespace_name, p.who.pod, p.who.container, p.gpu_uuid,
            p.mig_instance, model_of[p.gpu_uuid], p.sm_seconds, p.memory_byte_seconds,
            p.max_memory_bytes, p.cost_nano);
    status = step(upsert_usage_);
  }
  for (const DeviceUsage& d : w.devices) {
    if (!status.ok()) break;
    BindAll(upsert_device_, bucket, d.gpu_uuid, d.model, d.busy_seconds, d.unattributed_sm_seconds,
            d.idle_cost_nano, d.cost_nano);
    status = step(upsert_device_);
  }
  if (status.ok()) {
    char end[40];
    std::snprintf(end, sizeof end, "%.17g", t_end);
    BindAll(set_meta_, std::string("last_t"), std::string(end));
    status = step(set_meta_);
  }
  if (!status.ok()) {
    (void)Exec("ROLLBACK");
    return status;
  }
  return Exec("COMMIT");
}

absl::Status Ledger::SetPodLabels(const PodIndex& pods) {
  absl::StatusOr<sqlite3_stmt*> s =
      Prepare("INSERT OR REPLACE INTO pod_labels(namespace, pod, labels) VALUES(?,?,?)");
  if (!s.ok()) return s.status();
  Statement stmt{*s};
  if (absl::Status b = Exec("BEGIN IMMEDIATE"); !b.ok()) return b;
  for (const auto& [uid, pod] : pods.by_uid) {
    BindAll(stmt.s, pod.namespace_name, pod.name, nlohmann::json(pod.labels).dump());
    if (sqlite3_step(stmt.s) != SQLITE_DONE) {
      absl::Status e = Error("write failed");
      (void)Exec("ROLLBACK");
      return e;
    }
  }
  return Exec("COMMIT");
}

absl::StatusOr<Attribution> Ledger::Totals() {
  Attribution t;
  absl::StatusOr<sqlite3_stmt*> s = Prepare(
      "SELECT namespace, pod, container, gpu_uuid, mig_instance, SUM(sm_seconds), "
      "SUM(memory_byte_seconds), MAX(max_memory_bytes), SUM(cost_nano) FROM usage "
      "GROUP BY namespace, pod, container, gpu_uuid, mig_instance");
  if (!s.ok()) return s.status();
  Statement pods{*s};
  while (sqlite3_step(pods.s) == SQLITE_ROW) {
    PodUsage p;
    p.who = ContainerRef{Text(pods.s, 0), Text(pods.s, 1), Text(pods.s, 2)};
    p.gpu_uuid = Text(pods.s, 3);
    p.mig_instance = Text(pods.s, 4);
    p.sm_seconds = sqlite3_column_double(pods.s, 5);
    p.memory_byte_seconds = sqlite3_column_double(pods.s, 6);
    p.max_memory_bytes = sqlite3_column_int64(pods.s, 7);
    p.cost_nano = sqlite3_column_int64(pods.s, 8);
    t.pods.push_back(std::move(p));
  }
  s = Prepare(
      "SELECT gpu_uuid, MAX(model), SUM(busy_seconds), SUM(unattributed_sm_seconds), "
      "SUM(idle_cost_nano), SUM(cost_nano) FROM devices GROUP BY gpu_uuid");
  if (!s.ok()) return s.status();
  Statement devices{*s};
  while (sqlite3_step(devices.s) == SQLITE_ROW) {
    DeviceUsage d;
    d.gpu_uuid = Text(devices.s, 0);
    d.model = Text(devices.s, 1);
    d.busy_seconds = sqlite3_column_double(devices.s, 2);
    d.unattributed_sm_seconds = sqlite3_column_double(devices.s, 3);
    d.idle_cost_nano = sqlite3_column_int64(devices.s, 4);
    d.cost_nano = sqlite3_column_int64(devices.s, 5);
    t.devices.push_back(std::move(d));
  }
  return t;
}

absl::StatusOr<std::optional<double>> Ledger::LastTime() {
  absl::StatusOr<sqlite3_stmt*> s = Prepare("SELECT value FROM meta WHERE key='last_t'");
  if (!s.ok()) return s.status();
  Statement stmt{*s};
  if (sqlite3_step(stmt.s) != SQLITE_ROW) return std::optional<double>();
  return std::optional<double>(std::strtod(Text(stmt.s, 0).c_str(), nullptr));
}

absl::StatusOr<std::vector<ReportRow>> Ledger::Report(std::optional<double> since,
                                                      std::optional<double> until,
                                                      const std::string& group_by) {
  std::string group;
  std::string label_path;
  if (group_by == "namespace") {
    group = "u.namespace";
  } else if (group_by == "pod") {
    group = "u.namespace || '/' || u.pod";
  } else if (group_by.rfind("label:", 0) == 0 && group_by.size() > 6 &&
             group_by.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789-_./",
                                        6) == std::string::npos) {
    group = "COALESCE(json_extract(l.labels, ?3), '(no label)')";
    label_path = util::Cat("$.\"", group_by.substr(6), "\"");
  } else {
    return absl::InvalidArgumentError(util::Cat(
        "--group-by ", group_by,
        ": expected namespace, pod or label:KEY (a label key such as app.kubernetes.io/name)"));
  }
  std::string sql = util::Cat(
      "SELECT ", group, " AS g, COUNT(DISTINCT u.namespace || '/' || u.pod), SUM(sm_seconds), ",
      "SUM(memory_byte_seconds), MAX(max_memory_bytes), SUM(cost_nano) FROM usage u ",
      "LEFT JOIN pod_labels l ON l.namespace = u.namespace AND l.pod = u.pod ",
      "WHERE u.bucket >= ?1 AND u.bucket < ?2 GROUP BY g ORDER BY SUM(cost_nano) DESC, g");
  absl::StatusOr<sqlite3_stmt*> s = Prepare(sql.c_str());
  if (!s.ok()) return s.status();
  Statement stmt{*s};
  sqlite3_bind_double(stmt.s, 1, since.value_or(-1e300));
  sqlite3_bind_double(stmt.s, 2, until.value_or(1e300));
  if (!label_path.empty()) Bind(stmt.s, 3, label_path);
  std::vector<ReportRow> rows;
  int rc = 0;
  while ((rc = sqlite3_step(stmt.s)) == SQLITE_ROW) {
    ReportRow r;
    r.group = Text(stmt.s, 0);
    r.pods = sqlite3_column_int64(stmt.s, 1);
    r.sm_seconds = sqlite3_column_double(stmt.s, 2);
    r.memory_byte_seconds = sqlite3_column_double(stmt.s, 3);
    r.max_memory_bytes = sqlite3_column_int64(stmt.s, 4);
    r.cost_nano = sqlite3_column_int64(stmt.s, 5);
    rows.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return Error("read failed");
  return rows;
}

}  // namespace gpuplane::acct
