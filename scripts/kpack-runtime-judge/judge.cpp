// kpack-runtime-judge: rocm-kpack's own C++ runtime (runtime/ in ROCm/rocm-kpack, linked in as librocm_kpack.a)
// judges the archives and split hosts offload-kit writes. Our readers and rocm-kpack's Python reader agreeing with
// our writer proves little about the loader the HIP runtime (CLR) really calls, so this program asks that loader,
// through its public API only (rocm_kpack/kpack.h), and compares what it hands back with the code object
// `offload-kit extract` gave, byte for byte.
//
// Requests come on stdin, one per line, fields separated by tabs (scripts/kpack-runtime-judge/manifest.mjs
// writes them from `offload-kit extract --json`):
//   archive <file.kpack>                           kpack_open, then kpack_get_kernel for every TOC key and arch
//   key     <file.kpack> <key> <arch> <expected>   kpack_get_kernel(key, arch) == expected file
//   wrappers <host> <arch>                         the same, for every HIPK wrapper the host holds (no compare)
//   host    <host> <co_index> <arch> <expected>    the HIP runtime's path: the HIPK wrapper whose reserved1 is
//                                                  co_index, its binary pointer as the dynamic loader relocates
//                                                  it (R_X86_64_RELATIVE addend), the marker bytes there, then
//                                                  kpack_load_code_object(marker, host, co_index, {arch})
// Each request prints one line, "ok ..." or "FAIL ..." with the runtime's error; the last line counts them. Exit
// status 0 only when every request passed and at least one was made.
#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "rocm_kpack/kpack.h"

namespace {

const char* error_name(kpack_error_t e) {
  switch (e) {
    case KPACK_SUCCESS: return "SUCCESS";
    case KPACK_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case KPACK_ERROR_FILE_NOT_FOUND: return "FILE_NOT_FOUND";
    case KPACK_ERROR_INVALID_FORMAT: return "INVALID_FORMAT";
    case KPACK_ERROR_UNSUPPORTED_VERSION: return "UNSUPPORTED_VERSION";
    case KPACK_ERROR_KERNEL_NOT_FOUND: return "KERNEL_NOT_FOUND";
    case KPACK_ERROR_DECOMPRESSION_FAILED: return "DECOMPRESSION_FAILED";
    case KPACK_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case KPACK_ERROR_NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case KPACK_ERROR_IO_ERROR: return "IO_ERROR";
    case KPACK_ERROR_MSGPACK_PARSE_FAILED: return "MSGPACK_PARSE_FAILED";
    case KPACK_ERROR_PATH_DISCOVERY_FAILED: return "PATH_DISCOVERY_FAILED";
    case KPACK_ERROR_INVALID_METADATA: return "INVALID_METADATA";
    case KPACK_ERROR_ARCHIVE_NOT_FOUND: return "ARCHIVE_NOT_FOUND";
    case KPACK_ERROR_ARCH_NOT_FOUND: return "ARCH_NOT_FOUND";
  }
  return "UNKNOWN";
}

bool read_file(const std::string& path, std::vector<unsigned char>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

// Fields are read with memcpy: rocm-kpack leaves e_shoff unaligned, so no header may be read in place.
template <typename T>
bool read_at(const std::vector<unsigned char>& f, uint64_t off, T& out) {
  if (off > f.size() || f.size() - off < sizeof(T)) return false;
  std::memcpy(&out, f.data() + off, sizeof(T));
  return true;
}

// The marker as CLR sees it: the wrapper's binary pointer after relocation, turned into a pointer into the file
// through the PT_LOAD that maps it. Returns the file offset of the marker, or an error text.
struct HostMarker {
  uint64_t offset = 0;
  std::string error;
  std::vector<uint32_t> indices;  // every HIPK wrapper's co_index, in section order
};

HostMarker find_marker(const std::vector<unsigned char>& f, uint32_t co_index) {
  HostMarker r;
  Elf64_Ehdr eh;
  if (!read_at(f, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    r.error = "not a 64-bit ELF";
    return r;
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (size_t i = 0; i < sh.size(); ++i) {
    if (!read_at(f, eh.e_shoff + i * sizeof(Elf64_Shdr), sh[i])) {
      r.error = "section header table out of the file";
      return r;
    }
  }
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  for (size_t i = 0; i < ph.size(); ++i) {
    if (!read_at(f, eh.e_phoff + i * sizeof(Elf64_Phdr), ph[i])) {
      r.error = "program header table out of the file";
      return r;
    }
  }
  if (eh.e_shstrndx >= sh.size()) {
    r.error = "no section name table";
    return r;
  }
  const Elf64_Shdr& names = sh[eh.e_shstrndx];
  const Elf64_Shdr* segment = nullptr;
  for (const auto& s : sh) {
    uint64_t at = names.sh_offset + s.sh_name;
    if (at < f.size() && std::strncmp(reinterpret_cast<const char*>(f.data() + at), ".hipFatBinSegment",
                                      f.size() - at) == 0) {
      segment = &s;
    }
  }
  if (!segment) {
    r.error = "no .hipFatBinSegment";
    return r;
  }
  // The wrapper whose reserved1 (low 32 bits at +16) is co_index: the index CLR passes to the loader.
  uint64_t wrapper_vaddr = 0;
  uint64_t pointer = 0;
  bool found = false;
  for (uint64_t w = 0; w + 24 <= segment->sh_size; w += 24) {
    uint32_t magic = 0, index = 0;
    read_at(f, segment->sh_offset + w, magic);
    read_at(f, segment->sh_offset + w + 16, index);
    if (magic == 0x4B504948u) r.indices.push_back(index);
    if (magic == 0x4B504948u && index == co_index && !found) {
      wrapper_vaddr = segment->sh_addr + w;
      read_at(f, segment->sh_offset + w + 8, pointer);
      found = true;
    }
  }
  if (!found) {
    r.error = "no HIPK wrapper with co_index " + std::to_string(co_index);
    return r;
  }
  // What ld.so writes at the pointer: a RELATIVE relocation's addend (the file holds 0 there), else the file's value.
  for (const auto& s : sh) {
    if (s.sh_type != SHT_RELA || s.sh_entsize != sizeof(Elf64_Rela)) continue;
    for (uint64_t at = 0; at + sizeof(Elf64_Rela) <= s.sh_size; at += sizeof(Elf64_Rela)) {
      Elf64_Rela rela;
      if (!read_at(f, s.sh_offset + at, rela)) break;
      if (rela.r_offset == wrapper_vaddr + 8 && ELF64_R_TYPE(rela.r_info) == R_X86_64_RELATIVE) {
        pointer = static_cast<uint64_t>(rela.r_addend);
      }
    }
  }
  for (const auto& p : ph) {
    if (p.p_type == PT_LOAD && pointer >= p.p_vaddr && pointer < p.p_vaddr + p.p_filesz) {
      r.offset = p.p_offset + (pointer - p.p_vaddr);
      return r;
    }
  }
  char text[96];
  std::snprintf(text, sizeof text, "wrapper pointer 0x%llx is in no PT_LOAD's file bytes", static_cast<unsigned long long>(pointer));
  r.error = text;
  return r;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, '\t')) out.push_back(field);
  return out;
}

std::string compare(const void* data, size_t size, const std::string& expected_path) {
  std::vector<unsigned char> expected;
  if (!read_file(expected_path, expected)) return "cannot read " + expected_path;
  if (expected.size() != size) {
    return "size " + std::to_string(size) + ", offload-kit extract gave " + std::to_string(expected.size());
  }
  if (size > 0 && std::memcmp(expected.data(), data, size) != 0) return "bytes differ from offload-kit extract";
  return "";
}

}  // namespace

int main() {
  std::map<std::string, kpack_archive_t> archives;
  auto open_archive = [&](const std::string& path, kpack_error_t& err) -> kpack_archive_t {
    auto it = archives.find(path);
    if (it != archives.end()) return it->second;
    kpack_archive_t a = nullptr;
    err = kpack_open(path.c_str(), &a);
    if (err != KPACK_SUCCESS) return nullptr;
    archives[path] = a;
    return a;
  };
  kpack_cache_t cache = nullptr;
  if (kpack_cache_create(&cache) != KPACK_SUCCESS) {
    std::printf("FAIL kpack_cache_create\n");
    return 1;
  }

  size_t passed = 0, failed = 0, loads = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = split_tabs(line);
    std::string verdict;
    if (f[0] == "archive" && f.size() == 2) {
      kpack_error_t err = KPACK_SUCCESS;
      kpack_archive_t a = open_archive(f[1], err);
      if (!a) {
        verdict = std::string("kpack_open: ") + error_name(err);
      } else {
        size_t arch_count = 0, binary_count = 0, loaded = 0, absent = 0;
        kpack_get_architecture_count(a, &arch_count);
        kpack_get_binary_count(a, &binary_count);
        for (size_t b = 0; b < binary_count && verdict.empty(); ++b) {
          const char* binary = nullptr;
          kpack_get_binary(a, b, &binary);
          for (size_t i = 0; i < arch_count && verdict.empty(); ++i) {
            const char* arch = nullptr;
            kpack_get_architecture(a, i, &arch);
            void* data = nullptr;
            size_t size = 0;
            err = kpack_get_kernel(a, binary, arch, &data, &size);
            if (err == KPACK_SUCCESS) {
              ++loaded;
              ++loads;
            } else if (err == KPACK_ERROR_KERNEL_NOT_FOUND) {
              ++absent;  // a key need not have every architecture the archive lists
            } else {
              verdict = std::string("kpack_get_kernel(") + binary + ", " + arch + "): " + error_name(err);
            }
            kpack_free_kernel(data);
          }
        }
        if (verdict.empty()) {
          if (loaded == 0) {
            verdict = "no code object loaded";
          } else {
            std::printf("ok archive %s: %zu arch(es), %zu key(s), %zu code object(s) loaded, %zu key/arch pair(s) absent\n",
                        f[1].c_str(), arch_count, binary_count, loaded, absent);
          }
        }
      }
    } else if (f[0] == "key" && f.size() == 5) {
      kpack_error_t err = KPACK_SUCCESS;
      kpack_archive_t a = open_archive(f[1], err);
      if (!a) {
        verdict = std::string("kpack_open: ") + error_name(err);
      } else {
        void* data = nullptr;
        size_t size = 0;
        err = kpack_get_kernel(a, f[2].c_str(), f[3].c_str(), &data, &size);
        if (err != KPACK_SUCCESS) {
          verdict = std::string("kpack_get_kernel: ") + error_name(err);
        } else {
          ++loads;
          verdict = compare(data, size, f[4]);
          if (verdict.empty()) std::printf("ok key %s %s %s: %zu bytes, equal\n", f[1].c_str(), f[2].c_str(), f[3].c_str(), size);
        }
        kpack_free_kernel(data);
      }
    } else if (f[0] == "wrappers" && f.size() == 3) {
      // Every HIPK wrapper the host holds, each loaded by its own co_index: what CLR registers, independent of
      // which code objects offload-kit's extract reports.
      std::vector<unsigned char> host;
      if (!read_file(f[1], host)) {
        verdict = "cannot read host";
      } else {
        std::vector<uint32_t> indices = find_marker(host, UINT32_MAX).indices;
        if (indices.empty()) verdict = "no HIPK wrapper";
        for (uint32_t co_index : indices) {
          HostMarker m = find_marker(host, co_index);
          if (!m.error.empty()) {
            verdict = m.error;
            break;
          }
          const char* arch_list[] = {f[2].c_str()};
          void* data = nullptr;
          size_t size = 0;
          kpack_error_t err =
              kpack_load_code_object(cache, host.data() + m.offset, f[1].c_str(), co_index, arch_list, 1, &data, &size);
          kpack_free_code_object(data);
          if (err != KPACK_SUCCESS) {
            verdict = "co_index " + std::to_string(co_index) + ": kpack_load_code_object: " + error_name(err);
            break;
          }
          ++loads;
        }
        if (verdict.empty()) std::printf("ok wrappers %s %s: %zu HIPK wrapper(s), each loaded\n", f[1].c_str(), f[2].c_str(), indices.size());
      }
    } else if (f[0] == "host" && f.size() == 5) {
      std::vector<unsigned char> host;
      uint32_t co_index = static_cast<uint32_t>(std::stoul(f[2]));
      if (!read_file(f[1], host)) {
        verdict = "cannot read host";
      } else {
        HostMarker m = find_marker(host, co_index);
        if (!m.error.empty()) {
          verdict = m.error;
        } else {
          const char* arch_list[] = {f[3].c_str()};
          void* data = nullptr;
          size_t size = 0;
          kpack_error_t err =
              kpack_load_code_object(cache, host.data() + m.offset, f[1].c_str(), co_index, arch_list, 1, &data, &size);
          if (err != KPACK_SUCCESS) {
            verdict = std::string("kpack_load_code_object: ") + error_name(err);
          } else {
            ++loads;
            verdict = compare(data, size, f[4]);
            if (verdict.empty()) std::printf("ok host %s co_index %u %s: %zu bytes, equal\n", f[1].c_str(), co_index, f[3].c_str(), size);
          }
          kpack_free_code_object(data);
        }
      }
    } else {
      verdict = "malformed request";
    }
    if (verdict.empty()) {
      ++passed;
    } else {
      ++failed;
      std::printf("FAIL %s: %s\n", line.c_str(), verdict.c_str());
    }
  }
  for (auto& a : archives) kpack_close(a.second);
  kpack_cache_destroy(cache);
  std::printf("%zu request(s) passed, %zu failed, %zu code object(s) loaded by rocm-kpack's runtime\n", passed, failed, loads);
  return (failed == 0 && passed > 0) ? 0 : 1;
}
